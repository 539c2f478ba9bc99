// Pages a segment's mapped files in ahead of its searches, on a thread of its own (prefetch-thread.ts) so
// that neither the HTTP thread nor a search thread waits for the disk. At 1M chunks (660 MB of segment
// files, 2 cores, bench:scale, two runs each) the first passes after a restart went from a p95 of 17.0 and
// 13.1 ms to 10.8 and 11.6 (keyword), and from 25.2 and 25.0 to 23.3 and 21.6 (vector; a later pass ~13).
// The pages stay the OS's to drop under memory pressure, like any clean file page.
import { totalmem } from "node:os";
import type { SharedFile } from "./file-mapping.ts";

export interface PrefetchRequest {
  files: Pick<SharedFile, "address" | "length">[];
}

export class SegmentPrefetch {
  private worker: Worker | null = null;

  /**
   * @param budgetBytes the most paged in for one segment directory: past it the largest files are left to
   * be read as searches touch them, so that a segment near the machine's size does not push all else out.
   */
  constructor(private readonly budgetBytes = totalmem() / 4) {}

  /**
   * Asks for the files' pages to be read and mapped; returns at once. Smallest first: the lists, codebooks
   * and postings every search reads come before the full vectors (most of the bytes) that only re-scoring reads.
   */
  pageIn(files: SharedFile[]): void {
    const bySize = files.map(({ address, length }) => ({ address, length })).sort((a, b) => a.length - b.length);
    let total = 0;
    const within = bySize.filter((file) => (total += file.length) <= this.budgetBytes);
    if (within.length > 0) this.thread().postMessage({ files: within } satisfies PrefetchRequest);
  }

  stop(): void {
    this.worker?.terminate();
    this.worker = null;
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./prefetch-thread.ts", import.meta.url).href);
    // A thread that dies only costs the prefetching: the next segment starts a new one.
    worker.addEventListener("close", () => {
      if (this.worker === worker) this.worker = null;
    });
    (worker as Worker & { unref(): void }).unref();
    return (this.worker = worker);
  }
}
