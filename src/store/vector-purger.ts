// Deletes the vectors of deleted chunks (queued by migration 022's trigger) in the background, a slice of at
// most SLICE_MS at a time with the event loop free in between: sqlite-vec deletes cost 30-400 µs each, and
// deleting a large knowledge base's vectors at once would hold every request for seconds or minutes. The
// queue is in the database, so a crash or restart loses none of it.
import { LOCKED, tryWriteTx, type Db } from "./db.ts";
import { VECTOR_TABLE } from "./vectors.ts";

/** How long one slice may hold the thread (and the write lock). */
const SLICE_MS = 5;
/** How often an idle purger looks for work. */
const POLL_MS = 1000;

/**
 * Deletes queued vectors in rowid order (neighbours share sqlite-vec's chunk blobs) until the queue is
 * empty or `budgetMs` has passed. Returns whether any are left. It runs on the HTTP thread, so it never
 * waits for the write lock: while a worker holds it (the index worker forgetting a million log rows, an
 * ingestion writing chunks) the slice is left for later, and an empty queue is seen without taking it.
 */
export function purgeVectorSlice(db: Db, budgetMs: number): boolean {
  if (!queuedVectors(db)) return false;
  const started = performance.now();
  const next = db.query<{ rowid: number }, []>("SELECT rowid FROM vector_purge ORDER BY rowid LIMIT 64");
  const deleteVector = db.query(`DELETE FROM ${VECTOR_TABLE} WHERE rowid = ?`);
  const dequeue = db.query("DELETE FROM vector_purge WHERE rowid = ?");
  const done = tryWriteTx(db, () => {
    for (let batch = next.all(); batch.length > 0; batch = next.all()) {
      for (const { rowid } of batch) {
        deleteVector.run(rowid);
        dequeue.run(rowid);
        if (performance.now() - started >= budgetMs) return;
      }
    }
  });
  return done === LOCKED || queuedVectors(db);
}

function queuedVectors(db: Db): boolean {
  return db.query("SELECT 1 FROM vector_purge LIMIT 1").get() !== null;
}

export class VectorPurger {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = true;

  constructor(private readonly db: Db) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => this.run(), delayMs);
    this.timer.unref?.();
  }

  private run(): void {
    this.timer = null;
    if (this.stopped) return;
    let left = false;
    try {
      left = purgeVectorSlice(this.db, SLICE_MS);
    } catch (error) {
      // A failing database: the queue is kept, and tried again at the next poll.
      console.error(`vector purge: ${(error as Error).message}`);
    }
    // Slices alternate with pauses as long: at most half the thread's time goes to purging.
    this.schedule(left ? SLICE_MS : POLL_MS);
  }
}
