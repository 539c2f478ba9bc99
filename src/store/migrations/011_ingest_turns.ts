import type { Migration } from "./migration.ts";

// When each account last had a job claimed (a counter, not a time), so the queue can serve the account
// that waited longest instead of whoever queued first (src/ingest/queue.ts).
export const ingestTurns: Migration = {
  version: 11,
  name: "ingest turns",
  sql: `
CREATE TABLE ingest_turns (
  account_id TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  turn INTEGER NOT NULL
);
`,
};
