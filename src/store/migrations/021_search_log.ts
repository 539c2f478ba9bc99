import type { Migration } from "./migration.ts";

// The search index's change log (src/search/index-log.ts): one row per chunk written or deleted, in commit
// order, kept by triggers so every path (replacement, deletion, cascades) is logged. A knowledge base's
// on-disk index segment records the last seq it contains; the rows after it are applied in memory.
// Each document records the rowid range of its chunks, which are written together in one transaction
// (rowids are allocated max+1, so the range is contiguous): filters become rowid ranges without a scan.
// A second log names the documents whose status, metadata or chunks changed, so search rereads only
// those (search/kb-documents.ts); it replaces migration 020's counters, which made it reread them all.
// The FTS5 table was never queried (keyword search is our own BM25 over Porter2 terms) and goes.
export const searchLog: Migration = {
  version: 21,
  name: "search log",
  sql: `
CREATE TABLE search_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kb_id TEXT NOT NULL,
  chunk_rowid INTEGER NOT NULL,
  added INTEGER NOT NULL
);
CREATE INDEX search_log_kb ON search_log(kb_id, seq);

-- The published segment of each knowledge base: its log rows up to the watermark are gone, so a segment
-- folder found missing at startup means re-logging the knowledge base's chunks (search/index-recovery.ts).
CREATE TABLE search_segments (
  kb_id TEXT PRIMARY KEY,
  watermark INTEGER NOT NULL
);

CREATE TRIGGER chunks_search_log_insert AFTER INSERT ON chunks BEGIN
  INSERT INTO search_log (kb_id, chunk_rowid, added) VALUES (new.kb_id, new.rowid, 1);
END;
CREATE TRIGGER chunks_search_log_delete AFTER DELETE ON chunks BEGIN
  INSERT INTO search_log (kb_id, chunk_rowid, added) VALUES (old.kb_id, old.rowid, 0);
END;

INSERT INTO search_log (kb_id, chunk_rowid, added) SELECT kb_id, rowid, 1 FROM chunks ORDER BY rowid;

ALTER TABLE documents ADD COLUMN first_chunk_rowid INTEGER;
ALTER TABLE documents ADD COLUMN last_chunk_rowid INTEGER;
UPDATE documents SET
  first_chunk_rowid = (SELECT MIN(rowid) FROM chunks WHERE document_id = documents.id),
  last_chunk_rowid = (SELECT MAX(rowid) FROM chunks WHERE document_id = documents.id);

CREATE TABLE search_doc_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kb_id TEXT NOT NULL,
  document_id TEXT NOT NULL
);
CREATE INDEX search_doc_log_kb ON search_doc_log(kb_id, seq);
CREATE TRIGGER documents_search_doc_insert AFTER INSERT ON documents BEGIN
  INSERT INTO search_doc_log (kb_id, document_id) VALUES (new.kb_id, new.id);
END;
CREATE TRIGGER documents_search_doc_update AFTER UPDATE OF status, metadata, first_chunk_rowid, last_chunk_rowid ON documents BEGIN
  INSERT INTO search_doc_log (kb_id, document_id) VALUES (new.kb_id, new.id);
END;
CREATE TRIGGER documents_search_doc_delete AFTER DELETE ON documents BEGIN
  INSERT INTO search_doc_log (kb_id, document_id) VALUES (old.kb_id, old.id);
END;

DROP TRIGGER documents_search_insert;
DROP TRIGGER documents_search_update;
DROP TRIGGER documents_search_ready;
DROP TRIGGER documents_search_delete;
DROP TRIGGER knowledge_bases_search_delete;
DROP TABLE search_kb_generations;
DROP TABLE search_doc_versions;

DROP TRIGGER chunks_fts_insert;
DROP TRIGGER chunks_fts_delete;
DROP TABLE chunks_fts;
`,
};
