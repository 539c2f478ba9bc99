import type { Migration } from "./migration.ts";

// A document being deleted (store/deletions.ts): its chunks go in slices while the DELETE request waits,
// out of search from the first; a start finishes the deletions a stop interrupted.
export const documentDeletion: Migration = {
  version: 4,
  name: "document deletion",
  sql: `ALTER TABLE documents ADD COLUMN deleting INTEGER NOT NULL DEFAULT 0;`,
};
