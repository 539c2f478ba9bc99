// Asking the OS to read pages of a mapped file ahead (madvise MADV_WILLNEED): the reads start and the call
// returns, so pages asked for together come from the disk at the same time instead of one fault after
// another. Each call is a system call (~1.7 µs), which a search only pays where its pages are not in memory.
import { FFIType, ptr } from "bun:ffi";
import { openLibc } from "../runtime/libc.ts";

const MADV_WILLNEED = 3;

const libc =
  process.platform === "linux"
    ? openLibc({
        madvise: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
        getpagesize: { args: [], returns: FFIType.i32 },
      })
    : null;
const pageSize = libc?.symbols.getpagesize() ?? 4096;

/** Asks for the pages holding bytes [from, to) of the mapped `view` to be read in; returns at once. */
export function willNeed(view: Uint8Array, from: number, to: number): void {
  if (!libc || to <= from) return;
  const start = ptr(view) + from;
  const pageStart = start - (start % pageSize);
  libc.symbols.madvise(pageStart, start - pageStart + (to - from), MADV_WILLNEED);
}
