// One memory mapping per segment file for the whole process, held by the HTTP thread. The search threads
// read a segment through views of these mappings (file-mapping.ts viewOf) instead of mapping its files
// themselves: the kernel counts a resident file page once per mapping, so with a mapping per thread every
// page that two threads read counted twice (at 1M chunks, a vector search scoring both halves of the
// segment on one thread took the process from 1,047 to 1,541 MB).
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { ptr } from "bun:ffi";
import { mapFile, type SharedFile } from "./file-mapping.ts";
import { preferHugePages } from "./page-advice.ts";

interface HeldDir {
  files: Map<string, Uint8Array>;
  /** Open segments using the directory: its files stay mapped while any does. */
  holders: number;
  /** Counts the holds: a let-go whose threads answer after the directory was held (and let go) again is stale. */
  generation: number;
}

export class SegmentMappings {
  private readonly dirs = new Map<string, HeldDir>();

  /** Maps the directory's files unless they are mapped, and counts one more holder. */
  hold(dir: string): SharedFile[] {
    let held = this.dirs.get(dir);
    if (!held) {
      const files = new Map<string, Uint8Array>();
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).size === 0) continue;
        const bytes = mapFile(path);
        // Before any page is read in: the prefetch then reads 2 MB pages (page-advice.ts).
        preferHugePages(bytes);
        files.set(path, bytes);
      }
      this.dirs.set(dir, (held = { files, holders: 0, generation: 0 }));
    }
    held.holders++;
    held.generation++;
    return shared(held);
  }

  /** Every held directory's files, for a search thread that starts (again); not those on their way out. */
  held(): [string, SharedFile[]][] {
    return [...this.dirs].filter(([, held]) => held.holders > 0).map(([dir, held]) => [dir, shared(held)]);
  }

  /** The mapping of a file of a held directory; any other file is mapped on its own. */
  map(path: string): Uint8Array {
    return this.dirs.get(dirname(path))?.files.get(path) ?? mapFile(path);
  }

  /**
   * Counts a holder out. When none is left, returns the directory's generation: the threads must then drop
   * their views before `unmap` with it. Otherwise null.
   */
  letGo(dir: string): number | null {
    const held = this.dirs.get(dir);
    if (!held) return null;
    held.holders--;
    return held.holders === 0 ? held.generation : null;
  }

  /**
   * Lets the mappings of a directory go (they are unmapped when collected), unless it was held again since
   * the let-go that returned `generation`: then a search sent after that hold may still be queued behind
   * the threads' answers, and a later let-go unmaps it.
   */
  unmap(dir: string, generation: number): void {
    const held = this.dirs.get(dir);
    if (held?.holders === 0 && held.generation === generation) this.dirs.delete(dir);
  }
}

function shared(held: HeldDir): SharedFile[] {
  return [...held.files].map(([path, bytes]) => ({ path, address: ptr(bytes), length: bytes.byteLength }));
}
