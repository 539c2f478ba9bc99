// Copies the write-ahead log into the database from a thread of its own (checkpoint-thread.ts), so that
// the HTTP thread rarely does. SQLite checkpoints inside whichever commit takes the log past 1,000 pages;
// on the HTTP thread that was a search's usage count or a request-log flush, and the request waited for
// the copy of up to 1,000 pages and two fsyncs (strace at ~190 searches/s: ~30-40 ms every ~7 s). The
// thread copies the log once 500 pages wait, so the log mostly starts over before the HTTP thread's own
// checkpoint is due. That one stays: under back-to-back writes (a prune or a deletion in batches) each
// transaction starts before the thread's copy ends, the log cannot start over, and with the thread alone
// it grew. A loop of 361 transactions deleting 1,000 rows each, slowest five: 58-155 ms with the thread
// alone, 22-31 ms with both, 26-32 ms with SQLite's own only.
// 1M chunks, one client sending cheap keyword searches for 40 s (~450-600 a second, each writing its usage
// count and request-log row), four alternating runs each against SQLite's own only: requests over 15 ms
// 7-8 -> 0-3, p99.9 11.9-12.2 -> 8.8-10.5 ms, slowest 19.6-22.8 -> 14.0-20.6 ms.
import { stopWorker } from "../worker-stop.ts";

export type ToCheckpointThread = { type: "start"; databasePath: string } | { type: "stop" };

const STOP_GRACE_MS = 2_000;

export class Checkpointer {
  private worker: Worker | null = null;

  constructor(private readonly databasePath: string) {}

  start(): void {
    if (this.worker) return;
    const worker = new Worker(new URL("./checkpoint-thread.ts", import.meta.url).href);
    // It must not keep the process alive on its own (tests and CLI commands end when done).
    (worker as Worker & { unref(): void }).unref();
    worker.postMessage({ type: "start", databasePath: this.databasePath } satisfies ToCheckpointThread);
    this.worker = worker;
  }

  /** Lets the thread close its connection (so that the server's final checkpoint can empty the log), then ends it. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await stopWorker(worker, { type: "stop" } satisfies ToCheckpointThread, "stopped", STOP_GRACE_MS);
  }
}
