import type { Migration } from "./migration.ts";

// One row per document that still has to be processed; the row is deleted in the transaction that
// makes the document ready or failed, so "has a job row" means "not finished yet", across restarts.
export const ingestJobs: Migration = {
  version: 10,
  name: "ingest jobs",
  sql: `
CREATE TABLE ingest_jobs (
  seq INTEGER PRIMARY KEY,
  document_id TEXT NOT NULL UNIQUE REFERENCES documents(id) ON DELETE CASCADE,
  state TEXT NOT NULL CHECK (state IN ('queued','running')),
  -- claims so far; bounded so a file that keeps crashing workers (or the server) ends failed
  attempts INTEGER NOT NULL DEFAULT 0,
  enqueued_at TEXT NOT NULL,
  started_at TEXT
);
CREATE INDEX ingest_jobs_queue ON ingest_jobs(state, seq);
`,
};
