// The durable ingestion queue (table ingest_jobs): one row per document still to be processed, claimed
// first in, first out. Rows survive restarts; the row goes in the transaction that finishes the document.
import type { Db } from "../store/db.ts";

/** Claims per document before it is failed: a file that keeps killing its worker must not loop forever. */
export const MAX_ATTEMPTS = 3;

/** Queues the document at the back of the line (again, for a replacement). Call inside the write transaction. */
export function enqueue(db: Db, documentId: string, now: Date): void {
  db.query("DELETE FROM ingest_jobs WHERE document_id = ?").run(documentId);
  db.query("INSERT INTO ingest_jobs (document_id, state, attempts, enqueued_at) VALUES (?, 'queued', 0, ?)").run(
    documentId,
    now.toISOString(),
  );
}

/** A cheap read that spares idle polls a write transaction. */
export function hasQueuedJob(db: Db): boolean {
  return db.query("SELECT 1 FROM ingest_jobs WHERE state = 'queued' LIMIT 1").get() !== null;
}

/** Takes the oldest queued job, marks it running and counts the attempt; its document id, or null. Call inside a write transaction. */
export function claimNext(db: Db, now: Date): string | null {
  const row = db
    .query<{ document_id: string }, [string]>(
      `UPDATE ingest_jobs SET state = 'running', attempts = attempts + 1, started_at = ?
       WHERE seq = (SELECT seq FROM ingest_jobs WHERE state = 'queued' ORDER BY seq LIMIT 1)
       RETURNING document_id`,
    )
    .get(now.toISOString());
  return row?.document_id ?? null;
}

export function attemptsOf(db: Db, documentId: string): number | null {
  return db.query<{ attempts: number }, [string]>("SELECT attempts FROM ingest_jobs WHERE document_id = ?").get(documentId)?.attempts ?? null;
}

/** Puts a running job back in line; `uncount` gives back its attempt when the interruption was ours (shutdown). */
export function requeue(db: Db, documentId: string, uncount: boolean): void {
  db.query(
    `UPDATE ingest_jobs SET state = 'queued', started_at = NULL, attempts = MAX(0, attempts - ?) WHERE document_id = ?`,
  ).run(uncount ? 1 : 0, documentId);
}

export function removeJob(db: Db, documentId: string): void {
  db.query("DELETE FROM ingest_jobs WHERE document_id = ?").run(documentId);
}

/** After a restart nothing is running: every job goes back in line, and every unfinished document gets one. */
export function requeueAll(db: Db, documentIds: string[], now: Date): void {
  db.query("DELETE FROM ingest_jobs WHERE document_id IN (SELECT id FROM documents WHERE status IN ('ready', 'failed'))").run();
  db.query("UPDATE ingest_jobs SET state = 'queued', started_at = NULL WHERE state = 'running'").run();
  const insert = db.query(
    "INSERT INTO ingest_jobs (document_id, state, attempts, enqueued_at) VALUES (?, 'queued', 0, ?) ON CONFLICT(document_id) DO NOTHING",
  );
  for (const id of documentIds) insert.run(id, now.toISOString());
}
