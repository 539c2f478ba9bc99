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
/** Kernels without transparent huge pages answer EINVAL. */
const MADV_HUGEPAGE = 14;
/** A huge page on x86-64 and on arm64 with 4 kB pages; a smaller mapping cannot hold one. */
const HUGE_PAGE_BYTES = 2 << 20;

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

/**
 * Asks for the mapped file's pages to come in as 2 MB pages (MADV_HUGEPAGE): reads of them, the segment
 * prefetch's included, then fill 2 MB page-cache folios, and a folio mapped whole takes one page-table
 * entry instead of 512. Re-scoring reads ~2,000 vectors at random places of a 512 MB file; with 4 kB
 * pages nearly each one missed the TLB. 1M chunks, a hybrid search's vector side on one thread, files read
 * in by MADV_POPULATE_READ: 2.72-2.88 -> 2.57-2.67 ms (506 -> 637 MB mapped as 2 MB pages), and 3.0-3.1 ->
 * 2.6-2.7 ms where the files' pages had come in as 4 kB pages; its keyword side 2.75-2.80 -> 2.66-2.74 ms.
 * A file still in the page cache as 4 kB folios keeps them until they are dropped. A mapping under 2 MB is
 * left as it is; without the advice (EINVAL) nothing changes.
 */
export function preferHugePages(view: MappedView): void {
  if (view.byteLength >= HUGE_PAGE_BYTES) advise(ptr(view), view.byteLength, MADV_HUGEPAGE);
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
