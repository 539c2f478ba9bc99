// How a segment's immutable files come into memory: memory-mapped, so that opening costs nothing and the
// OS reads in (and drops) only the pages searches touch. By default whoever opens a segment maps its files;
// the search threads instead view the mappings the HTTP thread holds (segment-mappings.ts).
import { toArrayBuffer } from "bun:ffi";

/** The bytes of the file at `path`, mapped read-only. */
export type MapFile = (path: string) => Uint8Array;

export const mapFile: MapFile = (path) => Bun.mmap(path, { shared: false });

/** A file mapped by another thread of this process: where its mapping is and how long it is. */
export interface SharedFile {
  path: string;
  address: number;
  length: number;
}

/**
 * A view of another thread's mapping, without copying. Reading it after that mapping is gone crashes the
 * process: the owner keeps it until this thread says it dropped its views (segment-mappings.ts).
 */
export function viewOf(file: SharedFile): Uint8Array {
  return new Uint8Array(toArrayBuffer(file.address as never, 0, file.length));
}
