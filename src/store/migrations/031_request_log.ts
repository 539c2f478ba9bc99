import type { Migration } from "./migration.ts";

// account_id is null for requests no account can be attributed to (no or an invalid credential); such
// rows are kept for the operator but never listed. No foreign keys: history outlives deleted resources.
export const requestLog: Migration = {
  version: 31,
  name: "request log",
  sql: `
CREATE TABLE request_log (
  id TEXT PRIMARY KEY,
  account_id TEXT,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  status_code INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  auth_type TEXT CHECK (auth_type IN ('api_key','jwt')),
  kb_id TEXT,
  request_summary TEXT NOT NULL DEFAULT '{}',
  response_summary TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);
CREATE INDEX request_log_listing ON request_log(account_id, auth_type, created_at DESC, id DESC);
CREATE INDEX request_log_created ON request_log(created_at);
`,
};
