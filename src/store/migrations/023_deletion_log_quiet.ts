import type { Migration } from "./migration.ts";

// The chunks of a knowledge base being deleted (migration 003) are not logged for its search index as
// they go: the index is forgotten with it (search/index-recovery.ts forgetKnowledgeBase), and a million
// log rows would only have made the index worker rebuild segments of a knowledge base on its way out.
export const deletionLogQuiet: Migration = {
  version: 23,
  name: "no search log for a deleting knowledge base",
  sql: `
DROP TRIGGER chunks_search_log_delete;
CREATE TRIGGER chunks_search_log_delete AFTER DELETE ON chunks
WHEN NOT EXISTS (SELECT 1 FROM knowledge_bases WHERE id = old.kb_id AND deleting = 1) BEGIN
  INSERT INTO search_log (kb_id, chunk_rowid, added) VALUES (old.kb_id, old.rowid, 0);
END;
`,
};
