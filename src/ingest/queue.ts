// The durable ingestion queue (table ingest_jobs): one row per document still to be processed. Accounts
// take turns, so one account's long queue never delays another's upload behind it: the next job is
// the oldest of the account with the fewest running jobs, then the one served longest ago (table
// ingest_turns). Rows survive restarts; the row goes in the transaction that finishes the document.
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

/** Takes the next job in turn, marks it running and counts the attempt; its document id, or null. Call inside a write transaction. */
export function claimNext(db: Db, now: Date): string | null {
  // The accounts with queued jobs are walked one index seek each (a loose index scan), and each one's
  // oldest job is one more: the cost grows with the number of waiting accounts, not of queued jobs.
  const next = db
    .query<{ seq: number; account_id: string }, []>(
      `WITH RECURSIVE waiting(account_id) AS (
         SELECT MIN(account_id) FROM ingest_jobs WHERE state = 'queued'
         UNION ALL
         SELECT (SELECT MIN(j.account_id) FROM ingest_jobs j WHERE j.state = 'queued' AND j.account_id > w.account_id)
         FROM waiting w WHERE w.account_id IS NOT NULL
       ), running AS (
         SELECT account_id, COUNT(*) AS n FROM ingest_jobs WHERE state = 'running' GROUP BY account_id
       ), oldest AS (
         SELECT account_id, (SELECT MIN(j.seq) FROM ingest_jobs j WHERE j.state = 'queued' AND j.account_id = w.account_id) AS seq
         FROM waiting w WHERE account_id IS NOT NULL
       )
       SELECT o.seq, o.account_id FROM oldest o
       LEFT JOIN running r ON r.account_id = o.account_id
       LEFT JOIN ingest_turns t ON t.account_id = o.account_id
       ORDER BY COALESCE(r.n, 0), COALESCE(t.turn, 0), o.seq
       LIMIT 1`,
    )
    .get();
  if (!next) return null;
  db.query(
    `INSERT INTO ingest_turns (account_id, turn) VALUES (?1, (SELECT COALESCE(MAX(turn), 0) + 1 FROM ingest_turns))
     ON CONFLICT(account_id) DO UPDATE SET turn = excluded.turn`,
  ).run(next.account_id);
  const row = db
    .query<{ document_id: string }, [string, number]>(
      "UPDATE ingest_jobs SET state = 'running', attempts = attempts + 1, started_at = ? WHERE seq = ? RETURNING document_id",
    )
    .get(now.toISOString(), next.seq);
  return row?.document_id ?? null;
}

/** Which of these documents still have a job (queued or running); a deleted document's job went with it. */
export function existingJobs(db: Db, documentIds: string[]): Set<string> {
  const placeholders = documentIds.map(() => "?").join(", ");
  const rows = db.query<{ document_id: string }, string[]>(`SELECT document_id FROM ingest_jobs WHERE document_id IN (${placeholders})`).all(...documentIds);
  return new Set(rows.map((r) => r.document_id));
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
  // Per job, not `document_id IN (SELECT … FROM documents …)`: that reads every document row first.
  db.query("DELETE FROM ingest_jobs WHERE EXISTS (SELECT 1 FROM documents d WHERE d.id = ingest_jobs.document_id AND d.status IN ('ready', 'failed'))").run();
  db.query("UPDATE ingest_jobs SET state = 'queued', started_at = NULL WHERE state = 'running'").run();
  const insert = db.query(
    "INSERT INTO ingest_jobs (document_id, state, attempts, enqueued_at) VALUES (?, 'queued', 0, ?) ON CONFLICT(document_id) DO NOTHING",
  );
  for (const id of documentIds) insert.run(id, now.toISOString());
}
