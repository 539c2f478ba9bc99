// Keeps the write-ahead log short from a thread of its own (checkpoint-thread.ts), so that the HTTP
// thread never copies it into the database. SQLite checkpoints inside whichever commit takes the log past
// 1,000 pages; on the HTTP thread that was a search's usage count or a request-log flush, and the request
// waited for the copy and two fsyncs. 1M chunks, one client sending cheap keyword searches for 40 s
// (400-570 a second, each writing its usage count and request-log row), four alternating runs each:
// requests over 15 ms 7-17 -> 0-5, p99.9 13.2-14.2 -> 8.8-9.8 ms. The HTTP thread's connection checkpoints
// only past a fallback (db.ts: FALLBACK_CHECKPOINT_PAGES), should this thread stop; the ingestion and
// index workers keep SQLite's own checkpoints, being off the HTTP thread.
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
