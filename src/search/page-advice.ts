// Telling the OS how a mapped file's pages will be used (madvise): reading them ahead, so that pages asked
// for together come from the disk at the same time instead of one fault after another (MADV_WILLNEED: the
// reads start and the call returns), or reading and mapping them in now (MADV_POPULATE_READ, the segment
// prefetch). Each call is a system call (~1.7 µs): searches ask only for pages that are not in memory.
import { FFIType, ptr } from "bun:ffi";
import { openLibc } from "../runtime/libc.ts";

export const MADV_WILLNEED = 3;
/** Linux 5.14 and later; older kernels answer EINVAL. */
export const MADV_POPULATE_READ = 22;

const libc =
  process.platform === "linux"
    ? openLibc({
        madvise: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
        getpagesize: { args: [], returns: FFIType.i32 },
      })
    : null;
const pageSize = libc?.symbols.getpagesize() ?? 4096;

/** madvise(2) on the `length` bytes from the page-aligned `address`: whether it succeeded (false without madvise). */
export function advise(address: number, length: number, advice: number): boolean {
  return libc !== null && libc.symbols.madvise(address, length, advice) === 0;
}

/** Asks for the pages holding bytes [from, to) of the mapped `view` to be read in; returns at once. */
export function willNeed(view: Uint8Array, from: number, to: number): void {
  if (to <= from) return;
  const start = ptr(view) + from;
  const pageStart = start - (start % pageSize);
  advise(pageStart, start - pageStart + (to - from), MADV_WILLNEED);
}
