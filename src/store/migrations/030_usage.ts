import type { Migration } from "./migration.ts";

export const usage: Migration = {
  version: 30,
  name: "usage counters",
  sql: `
CREATE TABLE usage_counters (
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  period_start TEXT NOT NULL,
  pages_processed INTEGER NOT NULL DEFAULT 0,
  search_queries INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, period_start)
);
`,
};
