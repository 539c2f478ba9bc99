import type { Migration } from "./migration.ts";

// Document lists filtered by status (GET …/documents?status=failed, how clients poll for progress) read
// only the matching rows, newest first, instead of walking every document of the knowledge base: 0.7 ms
// per request at 4,000 documents, growing with the knowledge base.
export const documentsByStatus: Migration = {
  version: 2,
  name: "documents by status",
  sql: `CREATE INDEX documents_kb_status ON documents(kb_id, status, id);`,
};
