import type { Migration } from "./migration.ts";

// Change counters the search index cache (src/search/index-cache.ts) reads to stay fresh without
// rescanning: a knowledge base's generation moves on any change to its documents; a document's version
// moves each time it becomes ready, which is when its chunks are (re)written (ingest/indexer.ts).
export const searchVersions: Migration = {
  version: 20,
  name: "search versions",
  sql: `
CREATE TABLE search_kb_generations (
  kb_id TEXT PRIMARY KEY,
  generation INTEGER NOT NULL
);
CREATE TABLE search_doc_versions (
  document_id TEXT PRIMARY KEY,
  version INTEGER NOT NULL
);

CREATE TRIGGER documents_search_insert AFTER INSERT ON documents BEGIN
  INSERT INTO search_kb_generations (kb_id, generation) VALUES (new.kb_id, 1)
    ON CONFLICT(kb_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER documents_search_update AFTER UPDATE ON documents BEGIN
  INSERT INTO search_kb_generations (kb_id, generation) VALUES (new.kb_id, 1)
    ON CONFLICT(kb_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER documents_search_ready AFTER UPDATE OF status ON documents WHEN new.status = 'ready' BEGIN
  INSERT INTO search_doc_versions (document_id, version) VALUES (new.id, 1)
    ON CONFLICT(document_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER documents_search_delete AFTER DELETE ON documents BEGIN
  INSERT INTO search_kb_generations (kb_id, generation) VALUES (old.kb_id, 1)
    ON CONFLICT(kb_id) DO UPDATE SET generation = generation + 1;
  DELETE FROM search_doc_versions WHERE document_id = old.id;
END;
CREATE TRIGGER knowledge_bases_search_delete AFTER DELETE ON knowledge_bases BEGIN
  DELETE FROM search_kb_generations WHERE kb_id = old.id;
END;
`,
};
