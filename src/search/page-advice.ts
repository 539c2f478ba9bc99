// Telling the OS how a mapped file's pages will be used (madvise), and asking whether they are in memory
// (mincore). Reading pages ahead (MADV_WILLNEED: the reads start and the call returns) lets pages asked for
// together come from the disk at the same time, instead of one fault after another, each of which also reads
// the OS's read-ahead window around it (8 MB on this machine); MADV_POPULATE_READ reads and maps them in now
// (the segment prefetch). Each call is a system call (~1-2 µs): searches ask for pages only where the first
// ones they need are not in memory.
import { FFIType, ptr } from "bun:ffi";
import { openLibc } from "../runtime/libc.ts";

export const MADV_WILLNEED = 3;
/** Linux 5.14 and later; older kernels answer EINVAL. */
export const MADV_POPULATE_READ = 22;

const libc =
  process.platform === "linux"
    ? openLibc({
        madvise: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
        mincore: { args: [FFIType.ptr, FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
        getpagesize: { args: [], returns: FFIType.i32 },
      })
    : null;
const pageSize = libc?.symbols.getpagesize() ?? 4096;
const residency = new Uint8Array(1);

type MappedView = Uint8Array | Int32Array;

/** madvise(2) on the `length` bytes from the page-aligned `address`: whether it succeeded (false without madvise). */
export function advise(address: number, length: number, advice: number): boolean {
  return libc !== null && libc.symbols.madvise(address, length, advice) === 0;
}

/** Asks for the pages holding bytes [from, to) of the mapped `view` to be read in; returns at once. */
export function willNeed(view: MappedView, from: number, to: number): void {
  if (to <= from) return;
  const start = ptr(view) + from;
  const pageStart = start - (start % pageSize);
  advise(pageStart, start - pageStart + (to - from), MADV_WILLNEED);
}

/** Whether the page holding byte `at` of the mapped `view` is in memory (without reading it); true where unknown. */
export function inMemory(view: MappedView, at: number): boolean {
  if (!libc) return true;
  const address = ptr(view) + at;
  return libc.symbols.mincore(address - (address % pageSize), 1, ptr(residency)) !== 0 || (residency[0] & 1) === 1;
}
