import type { Migration } from "./migration.ts";

// A document being deleted (migration 004) is out of search at once: marking it is a change search
// rereads (search/kb-documents.ts counts it as not ready), so its chunks leave every search's candidates,
// rather than taking places in the top k and then being dropped when the results are read.
export const searchSeesDeletion: Migration = {
  version: 24,
  name: "search sees document deletion",
  sql: `
DROP TRIGGER documents_search_doc_update;
CREATE TRIGGER documents_search_doc_update AFTER UPDATE OF status, metadata, first_chunk_rowid, last_chunk_rowid, deleting ON documents BEGIN
  INSERT INTO search_doc_log (kb_id, document_id) VALUES (new.kb_id, new.id);
END;
`,
};
