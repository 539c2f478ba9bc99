import type { Migration } from "./migration.ts";

// Deleting a row of sqlite-vec's vec0 table costs 30-400 µs (it rewrites the validity and rowid blobs of
// the row's chunk), so deleting 4,000 chunks held the HTTP thread 1.6 s, and a knowledge base of a million
// would have held it for minutes. A deleted chunk's rowid is queued here instead (~9 µs a chunk in all),
// and store/vector-purger.ts deletes the queued vectors in short background slices.
export const vectorPurge: Migration = {
  version: 22,
  name: "vector purge queue",
  sql: `
CREATE TABLE vector_purge (rowid INTEGER PRIMARY KEY);
DROP TRIGGER IF EXISTS chunks_vec_delete;
CREATE TRIGGER chunks_vector_purge AFTER DELETE ON chunks BEGIN
  INSERT OR IGNORE INTO vector_purge (rowid) VALUES (old.rowid);
END;
`,
};
