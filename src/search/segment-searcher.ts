// The HTTP thread's handle on the search threads (search-thread.ts): one per core, up to MAX_THREADS.
// A search is split into tasks, each scoring a shard of the segment (shard.ts), and their hits are
// merged: a search that finds the threads idle uses every core, and under load each search is one task
// (splitWays), so concurrent searches share the cores without repeating work. The two sides of a hybrid
// search run at the same time, so each is split into at most its share of the threads, and only across
// idle ones, as above (splitting both across all of them only repeated each shard's fixed work: at 1M
// chunks on 2 cores, 3 interleaved runs: p95 one client 12.7 -> 11.8 ms, 8 clients 62.8 -> 57.3 ms; server
// CPU 11.1 -> 10.5 ms a search).
// Tasks wait here and go to whichever thread has the fewest in hand (at most IN_FLIGHT each), the oldest
// search's first (search-order.ts). Before, each task went to a fixed thread when sent: a side queued
// behind its own thread's backlog while another thread was free, and behind newer searches' tasks sent
// before it. 1M chunks, 2 cores, hybrid, median p95 of six paired rounds in one server with 8 clients:
// fixed threads -> first free thread 102 -> 94 and 164 -> 139 ms, then -> oldest search first 126 -> 108
// ms; with one client within 1 ms either way.
// Each task is a message answered by a promise; a thread that died is started again on the next task.
// The threads read the segments through views of mappings held here (segment-mappings.ts).
import { mergeShardHits, unpackHits, type RowidHit } from "./rowid-hit.ts";
import { SegmentMappings } from "./segment-mappings.ts";
import { SegmentPrefetch } from "./segment-prefetch.ts";
import { allShards } from "./shard.ts";
import type { FromSearchThread, KeywordQuery, ToSearchThread } from "./search-thread-protocol.ts";
import { nextSearch, type SearchSide } from "./search-order.ts";
import { cpuCount } from "../cpu-count.ts";

type Search = Extract<ToSearchThread, { id: number }>;
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
/** A part of a search one thread runs. */
type Task = DistributiveOmit<Extract<Search, { type: "vector" | "keyword" }>, "id">;

/** A task not yet sent to a thread. */
interface WaitingTask {
  order: number;
  task: Task;
  resolve(hits: RowidHit[]): void;
  reject(error: unknown): void;
}

class SearchThread {
  /** Tasks sent and not yet answered. */
  inHand = 0;
  private worker: Worker | null = null;
  private stopped = false;
  private readonly pending = new Map<number, { resolve(answer: FromSearchThread): void; reject(error: Error): void }>();
  private nextId = 1;
  /** Resolves when the latest thread has ended (a terminated thread may still be running for a moment). */
  private ended: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataDir: string,
    private readonly mappings: SegmentMappings,
  ) {}

  async search(message: DistributiveOmit<Search, "id">): Promise<RowidHit[]> {
    const answer = await this.request((id) => ({ ...message, id }) as Search);
    if (answer.type === "failed") throw new Error(answer.message);
    return answer.type === "result" ? unpackHits(answer.hits) : [];
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
    worker.postMessage({ type: "init", dataDir: this.dataDir } satisfies ToSearchThread);
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
/**
 * Tasks a thread holds at once: a second one is there when the first is answered, so a thread does not
 * wait on this thread to send it work; more would fix the order early.
 */
const IN_FLIGHT = 2;

/**
 * How many tasks a single-mode search that starts now is split into, given the tasks waiting for a thread
 * and the tasks each thread has in hand: one for each idle thread, one when none is idle. Splitting only
 * shortens a search while other threads would otherwise wait; once searches queue, each split repeats
 * its fixed work (messages, list ranking and tables, term lookups) and gains nothing, as every core is
 * busy anyway ("adaptive parallelism", as in Jeon et al., EuroSys 2013). The hits are the same either way
 * (see SegmentSearcher.vector and .keyword). 1M chunks, 2 cores, 8 clients, 10 interleaved rounds,
 * medians, always split -> split when idle: server CPU a search keyword 5.80 -> 4.84 ms, vector 7.65 ->
 * 6.17, under a 1 % filter 6.25 -> 5.58 and 5.66 -> 5.29; p95 35.1 -> 32.3, 45.0 -> 38.0, 45.2 -> 44.1
 * and 34.2 -> 34.2 ms. One client's searches find the threads idle: split as before.
 */
export function splitWays(waitingTasks: number, inHand: readonly number[]): number {
  if (waitingTasks > 0) return 1;
  return Math.max(1, inHand.filter((tasks) => tasks === 0).length);
}

export class SegmentSearcher {
  private readonly threads: SearchThread[];
  private readonly mappings = new SegmentMappings();
  private readonly prefetch = new SegmentPrefetch();
  /** In the order the tasks came: of the tasks of one search, the first to come goes first. */
  private readonly waiting: WaitingTask[] = [];
  /** Closes waiting for the directory's waiting tasks to be sent. */
  private readonly closing: { dir: string; allSent(): void }[] = [];

  constructor(dataDir: string) {
    // cpuCount, not os.availableParallelism(): that returns undefined once pdfjs has replaced `navigator` in
    // this thread (cpu-count.ts), and NaN threads were none: every segment search waited forever.
    const count = Math.min(MAX_THREADS, cpuCount());
    this.threads = Array.from({ length: count }, () => new SearchThread(dataDir, this.mappings));
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
    // Tasks on the directory still waiting here are sent first: a thread answers its messages in order, so
    // it drops its views after running them (else it would map the files again on its own, and keep them).
    await this.allSent(dir);
    // A thread that fails to answer has stopped, and holds no views either.
    await Promise.allSettled(this.threads.map((thread) => thread.closeDir(dir)));
    this.mappings.unmap(dir, generation);
  }

  /**
   * The vector search on the segment: a task for every idle thread (splitWays), or for a hybrid search's
   * vector share of the threads. Either way its shards are one per thread, so it finds the same hits: a
   * task with several scores them in one pass (vector/segment.ts).
   */
  vector(dir: string, query: Float32Array, eligible: Uint8Array | null, eligibleCount: number, limit: number, side: SearchSide = nextSearch(false)): Promise<RowidHit[]> {
    const shards = allShards(this.threads.length);
    const tasks = side.hybrid ? this.hybridSplit("vector") : this.splitNow();
    return this.run(
      limit,
      side,
      Array.from({ length: tasks }, (_, t) => ({ type: "vector", shards: shards.filter((_, i) => i % tasks === t), dir, query, eligible, eligibleCount, limit })),
    );
  }

  /** The keyword search on the segment: a shard for every idle thread (splitWays), or for a hybrid search's keyword share of the threads (exact either way). */
  keyword(dir: string, query: KeywordQuery, eligible: Uint8Array | null, limit: number, side: SearchSide = nextSearch(false)): Promise<RowidHit[]> {
    const shards = allShards(side.hybrid ? this.hybridSplit("keyword") : this.splitNow());
    return this.run(
      limit,
      side,
      shards.map((shard) => ({ type: "keyword", shard, dir, query, eligible, limit })),
    );
  }

  stop(): void {
    for (const thread of this.threads) thread.stop();
    this.prefetch.stop();
  }

  /** splitWays for a search that starts now. */
  private splitNow(): number {
    return splitWays(this.waiting.length, this.threads.map((thread) => thread.inHand));
  }

  /**
   * How many tasks a side of a hybrid search that starts now is split into: its share of the threads (half,
   * rounded up, for the keyword side, the rest for the vector side), of the idle ones only (splitWays).
   * On 2 cores each share is one task.
   */
  private hybridSplit(side: "keyword" | "vector"): number {
    const keyword = Math.ceil(this.threads.length / 2);
    return Math.min(side === "keyword" ? keyword : Math.max(1, this.threads.length - keyword), this.splitNow());
  }

  private async run(limit: number, { order }: SearchSide, tasks: Task[]): Promise<RowidHit[]> {
    const hits = await Promise.all(
      tasks.map(
        (task) =>
          new Promise<RowidHit[]>((resolve, reject) => {
            this.waiting.push({ order, task, resolve, reject });
            this.dispatch();
          }),
      ),
    );
    return mergeShardHits(hits, limit);
  }

  /** Resolves once no task on the directory waits here. */
  private allSent(dir: string): Promise<void> {
    if (!this.waiting.some(({ task }) => task.dir === dir)) return Promise.resolve();
    return new Promise((allSent) => this.closing.push({ dir, allSent }));
  }

  /** Sends waiting tasks, the oldest search's first, to the threads with the fewest in hand, while any has room. */
  private dispatch(): void {
    this.sendWaiting();
    for (let i = this.closing.length - 1; i >= 0; i--) {
      const { dir, allSent } = this.closing[i];
      if (this.waiting.some(({ task }) => task.dir === dir)) continue;
      this.closing.splice(i, 1);
      allSent();
    }
  }

  private sendWaiting(): void {
    while (this.waiting.length > 0) {
      let thread: SearchThread | null = null;
      for (const candidate of this.threads) if (candidate.inHand < IN_FLIGHT && (!thread || candidate.inHand < thread.inHand)) thread = candidate;
      if (!thread) return;
      // A few dozen wait at most under any load this serves: a scan is enough.
      let first = 0;
      for (let i = 1; i < this.waiting.length; i++) if (this.waiting[i].order < this.waiting[first].order) first = i;
      const [next] = this.waiting.splice(first, 1);
      const taker = thread;
      taker.inHand++;
      taker
        .search(next.task)
        .then(next.resolve, next.reject)
        .finally(() => {
          taker.inHand--;
          this.dispatch();
        });
    }
  }
}
