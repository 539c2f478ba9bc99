// The HTTP thread's handle on the search threads (search-thread.ts): one per core, up to MAX_THREADS.
// A search goes to all of them, each scoring its shard of the segment (shard.ts), and their hits are
// merged: one search uses every core, and concurrent searches share them evenly. The two sides of a
// hybrid search run at the same time, so each takes its own share of the threads instead: splitting both
// across all of them only repeated each shard's fixed work (at 1M chunks on 2 cores, keyword side whole on
// one thread and vector side on the other, 3 interleaved runs: p95 one client 12.7 -> 11.8 ms, 8 clients
// 62.8 -> 57.3 ms; server CPU 11.1 -> 10.5 ms a search).
// Each search is a message answered by a promise; a thread that died is started again on the next search.
// The threads read the segments through views of mappings held here (segment-mappings.ts).
import { availableParallelism } from "node:os";
import { mergeShardHits, type RowidHit } from "./rowid-hit.ts";
import { SegmentMappings } from "./segment-mappings.ts";
import { SegmentPrefetch } from "./segment-prefetch.ts";
import { allShards } from "./shard.ts";
import type { FromSearchThread, KeywordQuery, ToSearchThread } from "./search-thread-protocol.ts";

type Search = Extract<ToSearchThread, { id: number }>;
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

class SearchThread {
  private worker: Worker | null = null;
  private stopped = false;
  private readonly pending = new Map<number, { resolve(answer: FromSearchThread): void; reject(error: Error): void }>();
  private nextId = 1;
  /** Resolves when the latest thread has ended (a terminated thread may still be running for a moment). */
  private ended: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataDir: string,
    private readonly dimension: number,
    private readonly mappings: SegmentMappings,
  ) {}

  async search(message: DistributiveOmit<Search, "id">): Promise<RowidHit[]> {
    const answer = await this.request((id) => ({ ...message, id }) as Search);
    if (answer.type === "failed") throw new Error(answer.message);
    return answer.type === "result" ? answer.hits : [];
  }

  /** Resolves once the thread has dropped the directory's segment and views, or has ended (then it holds none). */
  async closeDir(dir: string): Promise<void> {
    const ended = this.ended;
    try {
      if (this.worker && !this.stopped) return void (await this.request((id) => ({ type: "close", id, dir })));
    } catch {
      // Stopped meanwhile.
    }
    await ended;
  }

  private send(message: ToSearchThread): void {
    if (this.stopped) throw new Error("Search is shutting down");
    this.thread().postMessage(message);
  }

  /** Starts the thread now rather than at the first search (loading its modules takes ~0.2 s). */
  start(): void {
    if (!this.stopped) this.thread();
  }

  /** Sends `message` only to a running thread (a thread that starts is sent every held directory). */
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
    this.ended = new Promise((resolve) => worker.addEventListener("close", () => resolve()));
    worker.addEventListener("close", () => {
      if (this.worker === worker) this.worker = null;
      this.failAll("A search thread stopped");
    });
    (worker as Worker & { unref(): void }).unref();
    worker.postMessage({ type: "init", dataDir: this.dataDir, dimension: this.dimension } satisfies ToSearchThread);
    for (const [dir, files] of this.mappings.held()) worker.postMessage({ type: "open", dir, files } satisfies ToSearchThread);
    return (this.worker = worker);
  }

  private request(message: (id: number) => ToSearchThread): Promise<FromSearchThread> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send(message(id));
    });
  }

  private receive(message: FromSearchThread): void {
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    waiting.resolve(message);
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
  private readonly mappings = new SegmentMappings();
  private readonly prefetch = new SegmentPrefetch();

  constructor(dataDir: string, dimension: number) {
    const count = Math.max(1, Math.min(MAX_THREADS, availableParallelism()));
    this.threads = Array.from({ length: count }, () => new SearchThread(dataDir, dimension, this.mappings));
  }

  get threadCount(): number {
    return this.threads.length;
  }

  /** Starts the threads, so that the first searches after a restart do not wait for them. */
  start(): void {
    for (const thread of this.threads) thread.start();
  }

  /** Maps a segment directory's files for the threads (once, however many open segments hold it), and pages them in. */
  open(dir: string): void {
    const files = this.mappings.hold(dir);
    this.prefetch.pageIn(files);
    for (const thread of this.threads) thread.sendIfRunning({ type: "open", dir, files });
  }

  /** The mapping of a file of an open directory, for reading it on this thread too. */
  mapping(path: string): Uint8Array {
    return this.mappings.map(path);
  }

  /** Lets go of a directory `open` held; its mappings go once no holder is left and every thread has dropped its views. */
  async close(dir: string): Promise<void> {
    const generation = this.mappings.letGo(dir);
    if (generation === null) return;
    // A thread that fails to answer has stopped, and holds no views either.
    await Promise.allSettled(this.threads.map((thread) => thread.closeDir(dir)));
    this.mappings.unmap(dir, generation);
  }

  /**
   * The vector search on the segment: on every thread, or on the hybrid search's vector share of them.
   * Either way its shards are one per thread, so it finds the same hits: a thread with several scores
   * them in one pass (vector/segment.ts).
   */
  vector(dir: string, query: Float32Array, eligible: Uint8Array | null, eligibleCount: number, limit: number, hybrid = false): Promise<RowidHit[]> {
    const threads = hybrid ? this.hybridShares().vector : this.threads;
    const shards = allShards(this.threads.length);
    return this.merged(
      limit,
      threads.map((thread, t) => thread.search({ type: "vector", shards: shards.filter((_, i) => i % threads.length === t), dir, query, eligible, eligibleCount, limit })),
    );
  }

  /** The keyword search on the segment, split across every thread or the hybrid search's keyword share (exact either way). */
  keyword(dir: string, query: KeywordQuery, eligible: Uint8Array | null, limit: number, hybrid = false): Promise<RowidHit[]> {
    const threads = hybrid ? this.hybridShares().keyword : this.threads;
    const shards = allShards(threads.length);
    return this.merged(
      limit,
      threads.map((thread, t) => thread.search({ type: "keyword", shard: shards[t], dir, query, eligible, limit })),
    );
  }

  stop(): void {
    for (const thread of this.threads) thread.stop();
    this.prefetch.stop();
  }

  /** A hybrid search's threads: the first half (rounded up) for its keyword side, the rest for its vector side; one thread serves both. */
  private hybridShares(): { keyword: SearchThread[]; vector: SearchThread[] } {
    if (this.threads.length === 1) return { keyword: this.threads, vector: this.threads };
    const half = Math.ceil(this.threads.length / 2);
    return { keyword: this.threads.slice(0, half), vector: this.threads.slice(half) };
  }

  private async merged(limit: number, searches: Promise<RowidHit[]>[]): Promise<RowidHit[]> {
    return mergeShardHits(await Promise.all(searches), limit);
  }
}
