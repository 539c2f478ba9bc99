// A thread that pages in the files of a segment the HTTP thread has just mapped (segment-prefetch.ts).
// Without it the first searches on a segment, after a start or a new build, fault its pages in one by
// one as they touch them. madvise(MADV_POPULATE_READ) reads the pages (from disk if need be) and maps them
// into the process; on a range that is no longer mapped it only fails, so it needs no hold on the mapping.
import { advise, MADV_POPULATE_READ } from "./page-advice.ts";
import type { PrefetchRequest } from "./segment-prefetch.ts";

declare const self: Worker;

/** Bytes per call, so that a mapping let go meanwhile stops the work within one step. */
const STEP = 16 << 20;

self.onmessage = (event: MessageEvent<PrefetchRequest>) => {
  for (const { address, length } of event.data.files) {
    for (let offset = 0; offset < length; offset += STEP) {
      // Fails where the range is no longer mapped, and on kernels without it (nothing is then paged in ahead).
      if (!advise(address + offset, Math.min(STEP, length - offset), MADV_POPULATE_READ)) break;
    }
  }
};
