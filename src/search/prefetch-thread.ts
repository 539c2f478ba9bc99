// A thread that pages in the files of a segment the HTTP thread has just mapped (segment-prefetch.ts).
// Without it the first searches on a segment, after a start or a new build, fault its pages in one by
// one as they touch them. madvise(MADV_POPULATE_READ) reads the pages (from disk if need be) and maps them
// into the process; on a range that is no longer mapped it only fails, so it needs no hold on the mapping.
import { FFIType } from "bun:ffi";
import { openLibc } from "../runtime/libc.ts";
import type { PrefetchRequest } from "./segment-prefetch.ts";

declare const self: Worker;

/** Linux 5.14 and later; older kernels answer EINVAL and nothing is paged in ahead. */
const MADV_POPULATE_READ = 22;
/** Bytes per call, so that a mapping let go meanwhile stops the work within one step. */
const STEP = 16 << 20;

const libc = process.platform === "linux" ? openLibc({ madvise: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 } }) : null;

self.onmessage = (event: MessageEvent<PrefetchRequest>) => {
  if (!libc) return;
  for (const { address, length } of event.data.files) {
    for (let offset = 0; offset < length; offset += STEP) {
      if (libc.symbols.madvise(address + offset, Math.min(STEP, length - offset), MADV_POPULATE_READ) !== 0) break;
    }
  }
};
