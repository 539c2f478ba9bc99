// The HTTP thread's handle on the vector search thread (vector-search-worker.ts): opens segments there
// ahead of their first search and sends it searches, each answered by a promise.
import type { RowidHit } from "./rowid-hit.ts";
import type { FromVectorWorker, ToVectorWorker } from "./vector-search-protocol.ts";

export class VectorSearcher {
  private worker: Worker | null = null;
  private stopped = false;
  private readonly pending = new Map<number, { resolve(hits: RowidHit[]): void; reject(error: Error): void }>();
  private nextId = 1;

  constructor(
    private readonly dataDir: string,
    private readonly dimension: number,
  ) {}

  /** Starts opening the segment so that its first search need not wait for it. */
  open(dir: string): void {
    this.send({ type: "open", dir });
  }

  close(dir: string): void {
    if (this.worker && !this.stopped) this.send({ type: "close", dir });
  }

  search(dir: string, query: Float32Array, eligible: Uint8Array | null, eligibleCount: number, limit: number): Promise<RowidHit[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ type: "search", id, dir, query, eligible, eligibleCount, limit });
    });
  }

  stop(): void {
    this.stopped = true;
    this.worker?.terminate();
    this.worker = null;
    this.failAll("Search is shutting down");
  }

  private send(message: ToVectorWorker): void {
    if (this.stopped) throw new Error("Search is shutting down");
    this.thread().postMessage(message);
  }

  /** The search thread, started on first use and again should it have died (it reopens segments on demand). */
  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./vector-search-worker.ts", import.meta.url).href);
    worker.onmessage = (event: MessageEvent<FromVectorWorker>) => this.receive(event.data);
    worker.addEventListener("close", () => {
      if (this.worker === worker) this.worker = null;
      this.failAll("The vector search thread stopped");
    });
    (worker as Worker & { unref(): void }).unref();
    worker.postMessage({ type: "init", dataDir: this.dataDir, dimension: this.dimension } satisfies ToVectorWorker);
    return (this.worker = worker);
  }

  private receive(message: FromVectorWorker): void {
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    if (message.type === "result") waiting.resolve(message.hits);
    else waiting.reject(new Error(message.message));
  }

  private failAll(reason: string): void {
    for (const waiting of this.pending.values()) waiting.reject(new Error(reason));
    this.pending.clear();
  }
}
