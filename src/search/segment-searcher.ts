// The HTTP thread's handle on the search threads (search-thread.ts): one per core, up to MAX_THREADS.
// Every search goes to all of them, each scoring its shard of the segment (shard.ts), and their hits are
// merged: one search uses every core, and concurrent searches share them evenly. Each search is a
// message answered by a promise; a thread that died is started again on the next search (it reopens
// segments on demand).
import { availableParallelism } from "node:os";
import { mergeHits, type RowidHit } from "./rowid-hit.ts";
import type { Shard } from "./shard.ts";
import type { FromSearchThread, KeywordQuery, ToSearchThread } from "./search-thread-protocol.ts";

type Search = Extract<ToSearchThread, { id: number }>;
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

class SearchThread {
  private worker: Worker | null = null;
  private stopped = false;
  private readonly pending = new Map<number, { resolve(hits: RowidHit[]): void; reject(error: Error): void }>();
  private nextId = 1;

  constructor(
    private readonly dataDir: string,
    private readonly dimension: number,
  ) {}

  search(message: DistributiveOmit<Search, "id">): Promise<RowidHit[]> {
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

  constructor(dataDir: string, dimension: number) {
    const count = Math.max(1, Math.min(MAX_THREADS, availableParallelism()));
    this.threads = Array.from({ length: count }, () => new SearchThread(dataDir, dimension));
  }

  get threadCount(): number {
    return this.threads.length;
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
    return this.everyShard(limit, (shard) => ({ type: "vector", shard, dir, query, eligible, eligibleCount, limit }));
  }

  keyword(dir: string, query: KeywordQuery, eligible: Uint8Array | null, limit: number): Promise<RowidHit[]> {
    return this.everyShard(limit, (shard) => ({ type: "keyword", shard, dir, query, eligible, limit }));
  }

  stop(): void {
    for (const thread of this.threads) thread.stop();
  }

  /** Sends the search to every thread, each for its shard, and merges their best hits. */
  private async everyShard(limit: number, search: (shard: Shard) => DistributiveOmit<Search, "id">): Promise<RowidHit[]> {
    const count = this.threads.length;
    const hits = await Promise.all(this.threads.map((thread, index) => thread.search(search({ index, count }))));
    return count === 1 ? hits[0] : mergeHits(hits, limit);
  }
}
