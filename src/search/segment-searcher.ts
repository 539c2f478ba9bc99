// The HTTP thread's handle on the search threads (search-thread.ts): one per core, up to MAX_THREADS.
// While fewer searches are running than there are threads, a search is split into its shards (shard.ts),
// one per thread, and their hits merged: one search uses every core. Past that the cores are taken
// anyway, and splitting only adds work (every shard repeats some) and waits (a search ends with its
// slowest shard): a search stays whole, one thread scoring every shard, so the answer is the same.
// Searches and shards wait in one queue and each thread takes the next as soon as it is free, so none
// waits behind a long search on a busy thread while another is idle. Each is a message answered by a
// promise; a thread that died is started again on the next search (it reopens segments on demand).
import { availableParallelism } from "node:os";
import { mergeHits, type RowidHit } from "./rowid-hit.ts";
import type { Shard } from "./shard.ts";
import type { FromSearchThread, KeywordQuery, ToSearchThread } from "./search-thread-protocol.ts";

type Search = Extract<ToSearchThread, { id: number }>;
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
type Unsent = DistributiveOmit<Search, "id">;

/** A search, or one shard of it, waiting for a free thread. */
interface Task {
  message: Unsent;
  resolve(hits: RowidHit[]): void;
  reject(error: Error): void;
}

class SearchThread {
  private worker: Worker | null = null;
  private stopped = false;
  private readonly pending = new Map<number, { resolve(hits: RowidHit[]): void; reject(error: Error): void }>();
  private nextId = 1;

  /** Searches sent and not yet answered. */
  get load(): number {
    return this.pending.size;
  }

  constructor(
    private readonly dataDir: string,
    private readonly dimension: number,
  ) {}

  search(message: Unsent): Promise<RowidHit[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ ...message, id } as Search);
    });
  }

  send(message: ToSearchThread): void {
    if (this.stopped) throw new Error("Search is shutting down");
    this.thread().postMessage(message);
  }

  /** Starts the thread now rather than at the first search (loading its modules takes ~0.2 s). */
  start(): void {
    if (!this.stopped) this.thread();
  }

  /** Sends `message` only to a running thread (a thread started later has nothing open). */
  sendIfRunning(message: ToSearchThread): void {
    if (this.worker && !this.stopped) this.worker.postMessage(message);
  }

  stop(): void {
    this.stopped = true;
    this.worker?.terminate();
    this.worker = null;
    this.failAll("Search is shutting down");
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./search-thread.ts", import.meta.url).href);
    worker.onmessage = (event: MessageEvent<FromSearchThread>) => this.receive(event.data);
    worker.addEventListener("close", () => {
      if (this.worker === worker) this.worker = null;
      this.failAll("A search thread stopped");
    });
    (worker as Worker & { unref(): void }).unref();
    worker.postMessage({ type: "init", dataDir: this.dataDir, dimension: this.dimension } satisfies ToSearchThread);
    return (this.worker = worker);
  }

  private receive(message: FromSearchThread): void {
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

/**
 * Each shard repeats some fixed work (term lookups, list ranking, re-scoring its best 1,000 vectors), so
 * past a few threads the split stops paying (measured on 2 cores only).
 */
const MAX_THREADS = 4;

export class SegmentSearcher {
  private readonly threads: SearchThread[];
  /** Searches started and not yet answered, each counted once however it was sent. */
  private running = 0;
  private readonly waiting: Task[] = [];
  private stopped = false;

  constructor(dataDir: string, dimension: number) {
    const count = Math.max(1, Math.min(MAX_THREADS, availableParallelism()));
    this.threads = Array.from({ length: count }, () => new SearchThread(dataDir, dimension));
  }

  /** Starts the threads, so that the first searches after a restart do not wait for them. */
  start(): void {
    for (const thread of this.threads) thread.start();
  }

  /** Starts opening a vector segment so that its first search need not wait for it. */
  openVectors(dir: string): void {
    for (const thread of this.threads) thread.send({ type: "open", dir });
  }

  close(dir: string): void {
    for (const thread of this.threads) thread.sendIfRunning({ type: "close", dir });
  }

  vector(dir: string, query: Float32Array, eligible: Uint8Array | null, eligibleCount: number, limit: number): Promise<RowidHit[]> {
    return this.everyShard(limit, (shards) => ({ type: "vector", shards, dir, query, eligible, eligibleCount, limit }));
  }

  keyword(dir: string, query: KeywordQuery, eligible: Uint8Array | null, limit: number): Promise<RowidHit[]> {
    return this.everyShard(limit, (shards) => ({ type: "keyword", shards, dir, query, eligible, limit }));
  }

  stop(): void {
    this.stopped = true;
    for (const task of this.waiting.splice(0)) task.reject(new Error("Search is shutting down"));
    for (const thread of this.threads) thread.stop();
  }

  /**
   * Splits the search into one shard per thread and merges their best hits; or, when as many searches
   * are running as there are threads, has one thread score every shard.
   */
  private async everyShard(limit: number, search: (shards: Shard[]) => Unsent): Promise<RowidHit[]> {
    const count = this.threads.length;
    const shards = Array.from({ length: count }, (_, index) => ({ index, count }));
    const split = this.running < count;
    this.running++;
    try {
      if (!split) return await this.queue(search(shards));
      const hits = await Promise.all(shards.map((shard) => this.queue(search([shard]))));
      return count === 1 ? hits[0] : mergeHits(hits, limit);
    } finally {
      this.running--;
    }
  }

  private queue(message: Unsent): Promise<RowidHit[]> {
    if (this.stopped) return Promise.reject(new Error("Search is shutting down"));
    return new Promise((resolve, reject) => {
      this.waiting.push({ message, resolve, reject });
      this.assign();
    });
  }

  /** Gives each free thread the next waiting task. */
  private assign(): void {
    for (const thread of this.threads) {
      if (this.waiting.length === 0) return;
      if (thread.load > 0) continue;
      const task = this.waiting.shift()!;
      thread
        .search(task.message)
        .then(task.resolve, task.reject)
        .finally(() => this.assign());
    }
  }
}
