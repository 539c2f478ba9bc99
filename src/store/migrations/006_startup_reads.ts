import type { Migration } from "./migration.ts";

// What a start reads of the documents table on the HTTP thread before it listens: the unfinished documents
// (queued again), those being deleted (their deletion finished) and the stored files' paths (swept).
// Without these indexes each was a scan of the document rows: at 50,000 documents 50-120, 13-16 and 9-80
// ms. Each index holds only the rows its query reads, and every column it reads, so the rows themselves
// are not visited.
export const startupReads: Migration = {
  version: 6,
  name: "startup reads",
  sql: `CREATE INDEX documents_unfinished ON documents(id, status, deleting) WHERE status NOT IN ('ready', 'failed') AND deleting = 0;
CREATE INDEX documents_deleting ON documents(id, kb_id) WHERE deleting = 1;
CREATE INDEX documents_stored ON documents(storage_path) WHERE storage_path IS NOT NULL;`,
};
