// Keeps request logging off the request path: entries are buffered in memory and written in one
// transaction per batch (every second, when the buffer fills, before the history is read, and on
// shutdown). Entries older than the retention period are pruned along the way, every hour, PRUNE_BATCH
// at a time with other requests running in between: one DELETE of an hour's entries at 100 requests a
// second (360,000) held the HTTP thread for 1.8 s.
// Entries of no account (no or a bad credential, unknown routes) are listed to no one and cost nothing to
// send: they are kept for the operator at UNATTRIBUTED_PER_SECOND at most, for a day, and every path is cut
// to MAX_PATH_CHARS. Unbounded, a client with no account grew the database by 78 MB a second.
import { writeTxWhenFree, type Db } from "./db.ts";
import type { Clock } from "../clock.ts";
import { insertRequestLog, pruneRequestLog, pruneUnattributedRequestLog, type RequestLogRecord } from "./requests.ts";
import { cutToLength } from "../characters.ts";

export const REQUEST_LOG_RETENTION_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;
/** Entries of no account kept a second (the rest are dropped; /api/metrics still counts every request). */
export const UNATTRIBUTED_PER_SECOND = 10;
const UNATTRIBUTED_RETENTION_MS = DAY_MS;
/** Characters kept of a path ("…" the last of them): a route's own paths take under 100. */
export const MAX_PATH_CHARS = 512;

const FLUSH_INTERVAL_MS = 1000;
const BATCH_SIZE = 500;
/** If the database stays unwritable, keep at most this many entries rather than grow without bound. */
const MAX_BUFFERED = 20_000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;
/** Entries deleted per transaction: 3-6 ms each (the 360,000 of that hour took 361 of them). */
const PRUNE_BATCH = 1_000;

/** When the oldest entry still kept at `now` was made. */
export function requestLogKeptSince(now: Date): Date {
  return new Date(now.getTime() - REQUEST_LOG_RETENTION_DAYS * DAY_MS);
}

export class RequestLogWriter {
  private buffer: RequestLogRecord[] = [];
  /** Entries still being completed (e.g. their account looked up) after the response was sent. */
  private readonly pending = new Set<Promise<void>>();
  /** Batches being written (each waits for the write lock). */
  private readonly writing = new Set<Promise<void>>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private flushScheduled = false;
  private lastPrune = Number.NEGATIVE_INFINITY;
  /** The prune under way, if any. */
  private pruning: Promise<void> | null = null;
  private stopped = false;
  /** Whether the last write failed (its message is not repeated until one succeeds). */
  private failing = false;
  /** The second (of the clock) and how many entries of no account were kept in it. */
  private unattributed = { second: -1, kept: 0 };

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref?.();
  }

  record(entry: RequestLogRecord | Promise<RequestLogRecord>): void {
    if (this.stopped) return;
    if (entry instanceof Promise) {
      const settled = entry.then(
        (complete) => this.record(complete),
        (error: Error) => console.error(`request log: could not complete an entry: ${error.message}`),
      );
      const tracked = settled.finally(() => this.pending.delete(tracked));
      this.pending.add(tracked);
      return;
    }
    if (entry.accountId === null && !this.keepUnattributed()) return;
    const path = cutToLength(entry.path, MAX_PATH_CHARS);
    this.buffer.push(path === entry.path ? entry : { ...entry, path });
    if (this.buffer.length > MAX_BUFFERED) this.buffer.splice(0, this.buffer.length - MAX_BUFFERED);
    if (this.buffer.length >= BATCH_SIZE && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => void this.flush());
    }
  }

  /**
   * Writes everything buffered so far, once no other connection (a worker) holds the write lock: this runs
   * on the HTTP thread, which must not sleep in SQLite's busy wait (store/db.ts writeTxWhenFree). Never
   * rejects: a failed batch is kept for the next attempt.
   */
  flush(): Promise<void> {
    this.flushScheduled = false;
    if (this.buffer.length === 0) return Promise.resolve();
    const batch = this.buffer;
    this.buffer = [];
    const written = this.write(batch).finally(() => this.writing.delete(written));
    this.writing.add(written);
    return written;
  }

  /**
   * Makes the history complete up to now: lets the responses already sent record their entries (the
   * framework records them right after sending), waits for entries still being completed, then writes
   * (and waits for the writes under way).
   */
  async flushPending(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(this.pending);
    void this.flush();
    await Promise.all(this.writing);
  }

  /** Final flush on shutdown; entries recorded afterwards are dropped. A prune under way stops after its current batch. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flushPending();
    this.stopped = true;
    await this.pruning;
  }

  private async write(batch: RequestLogRecord[]): Promise<void> {
    try {
      await writeTxWhenFree(this.db, () => insertRequestLog(this.db, batch));
      if (this.failing) console.error("request log: written again; the entries kept meanwhile are in");
      this.failing = false;
      this.pruneIfDue();
    } catch (error) {
      this.buffer = batch.concat(this.buffer);
      // Said once until a write succeeds: a full disk fails every flush, several a second.
      if (!this.failing) console.error(`request log: could not write ${batch.length} entries (${(error as Error).message}); they are kept and written once it can`);
      this.failing = true;
    }
  }

  private keepUnattributed(): boolean {
    const second = Math.floor(this.clock.now().getTime() / 1000);
    if (second !== this.unattributed.second) this.unattributed = { second, kept: 0 };
    return this.unattributed.kept++ < UNATTRIBUTED_PER_SECOND;
  }

  private pruneIfDue(): void {
    const now = this.clock.now().getTime();
    if (this.pruning || now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    this.pruning = (async () => {
      await this.prune(pruneRequestLog, requestLogKeptSince(new Date(now)));
      await this.prune(pruneUnattributedRequestLog, new Date(now - UNATTRIBUTED_RETENTION_MS));
    })().finally(() => (this.pruning = null));
  }

  private async prune(pruneBatch: typeof pruneRequestLog, olderThan: Date): Promise<void> {
    try {
      while (!this.stopped && (await writeTxWhenFree(this.db, () => pruneBatch(this.db, olderThan, PRUNE_BATCH))) === PRUNE_BATCH) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      console.error(`request log: could not prune entries older than ${olderThan.toISOString()}: ${(error as Error).message}`);
    }
  }
}
