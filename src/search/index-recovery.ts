// Keeps the change log and the segment folders consistent at startup. Publishing a segment trims the
// log up to its watermark (recorded in search_segments), so if a segment folder is gone (deleted by
// hand, a restored backup of the database alone) its knowledge base's chunks are logged again and the
// index is rebuilt from them: the database stays the source of truth and nothing is lost. A segment
// written in an older format is rebuilt the same way after an upgrade.
import type { Db } from "../store/db.ts";
import { writeTx } from "../store/db.ts";
import { latestSegment, removeStaleSegments, SEGMENT_FORMAT } from "./segment-files.ts";

/** Re-logs every chunk of the knowledge base and forgets its segment. Call inside a write transaction. */
function relog(db: Db, dataDir: string, kbId: string): void {
  db.query("DELETE FROM search_log WHERE kb_id = ?").run(kbId);
  db.query("INSERT INTO search_log (kb_id, chunk_rowid, added) SELECT kb_id, rowid, 1 FROM chunks WHERE kb_id = ? ORDER BY rowid").run(kbId);
  db.query("DELETE FROM search_segments WHERE kb_id = ?").run(kbId);
  removeStaleSegments(dataDir, kbId, 0);
}

/** Re-logs the knowledge bases whose recorded segment is missing, older than recorded or of an older format. */
export function recoverSearchIndexes(db: Db, dataDir: string): void {
  // One being deleted is only forgotten (by the index worker), never re-logged.
  const recorded = db
    .query<{ kb_id: string; watermark: number }, []>("SELECT kb_id, watermark FROM search_segments WHERE kb_id NOT IN (SELECT id FROM knowledge_bases WHERE deleting = 1)")
    .all();
  const lost = recorded.filter((row) => {
    const segment = latestSegment(dataDir, row.kb_id);
    return !segment || segment.watermark < row.watermark || segment.format !== SEGMENT_FORMAT;
  });
  if (lost.length > 0) writeTx(db, () => lost.forEach((row) => relog(db, dataDir, row.kb_id)));
}

/** Drops every segment and re-logs every chunk (after re-embedding: `quarry reindex`). */
export function resetSearchIndexes(db: Db, dataDir: string): void {
  writeTx(db, () => {
    for (const { id } of db.query<{ id: string }, []>("SELECT id FROM knowledge_bases").all()) relog(db, dataDir, id);
  });
}

/**
 * Log rows forgotten per transaction once a segment is recorded. Forgetting a million in one held the
 * write lock for ~0.5 s, and every other writer, the HTTP thread's request log among them, waited.
 */
export const TRIM_BATCH = 5000;
/**
 * The pause between two batches (each holds the write lock ~14-22 ms at 1M chunks). Back to back, the
 * lock was free only for instants, which writers sleeping in SQLite's busy wait (1, 2, 5, 10, 15, 20, 25
 * ms…) kept missing: after a 1M-chunk build, a write on the HTTP thread held it 56 ms.
 */
const TRIM_PAUSE_MS = 10;

/** How the index worker waits between batches (blocking its own thread only). */
export type TrimPause = () => void;
const pauseBetweenBatches: TrimPause = () => Bun.sleepSync(TRIM_PAUSE_MS);

/**
 * Records a published segment, then forgets the log rows it holds a batch at a time: readers start after
 * the watermark once they adopt the segment, and rows a stop or crash left are forgotten at the next
 * start (index-worker.ts).
 */
export function recordSegment(db: Db, kbId: string, watermark: number, pause = pauseBetweenBatches): void {
  db.query("INSERT INTO search_segments (kb_id, watermark) VALUES (?, ?) ON CONFLICT(kb_id) DO UPDATE SET watermark = excluded.watermark").run(
    kbId,
    watermark,
  );
  forgetLogRows(db, kbId, watermark, pause);
}

/**
 * Whether the segment of `watermark` is not yet fully recorded: another watermark on record (a crash
 * between publishing and recording), or log rows it holds not yet forgotten (a stop during the trim).
 */
export function recordUnfinished(db: Db, kbId: string, watermark: number): boolean {
  const recorded = db.query<{ watermark: number }, [string]>("SELECT watermark FROM search_segments WHERE kb_id = ?").get(kbId)?.watermark;
  return recorded !== watermark || db.query("SELECT 1 FROM search_log WHERE kb_id = ? AND seq <= ? LIMIT 1").get(kbId, watermark) !== null;
}

/** Forgets a deleted (or deleting) knowledge base's segment record and changes, a batch of log rows at a time. */
export function forgetKnowledgeBase(db: Db, kbId: string, pause = pauseBetweenBatches): void {
  db.query("DELETE FROM search_segments WHERE kb_id = ?").run(kbId);
  forgetLogRows(db, kbId, Number.MAX_SAFE_INTEGER, pause);
}

/** Deletes the knowledge base's log rows up to `seq`, TRIM_BATCH per statement, pausing between statements. */
function forgetLogRows(db: Db, kbId: string, seq: number, pause: TrimPause): void {
  const trim = db.query("DELETE FROM search_log WHERE seq IN (SELECT seq FROM search_log WHERE kb_id = ? AND seq <= ? ORDER BY seq LIMIT ?)");
  while (trim.run(kbId, seq, TRIM_BATCH).changes === TRIM_BATCH) pause();
}
