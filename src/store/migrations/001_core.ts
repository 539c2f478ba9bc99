import type { Migration } from "./migration.ts";

export const core: Migration = {
  version: 1,
  name: "core",
  sql: `
CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  email_normalized TEXT NOT NULL UNIQUE,
  name TEXT,
  password_hash TEXT NOT NULL,
  api_key_hash TEXT UNIQUE,
  plan TEXT NOT NULL DEFAULT 'trial',
  trial_ends_at TEXT NOT NULL,
  period_anchor TEXT NOT NULL,
  subscription_id TEXT,
  customer_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX accounts_customer ON accounts(customer_id);

CREATE TABLE knowledge_bases (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX knowledge_bases_account ON knowledge_bases(account_id, id);

CREATE TABLE documents (
  id TEXT PRIMARY KEY,
  kb_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  file_type TEXT NOT NULL,
  file_size_bytes INTEGER,
  page_count INTEGER,
  chunk_count INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('pending','parsing','chunking','embedding','ready','failed')),
  error_detail TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  storage_path TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX documents_kb ON documents(kb_id, id);
CREATE INDEX documents_account ON documents(account_id);

-- rowid is the join key for the keyword (FTS5) and vector (sqlite-vec) indexes.
CREATE TABLE chunks (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  kb_id TEXT NOT NULL,
  chunk_index INTEGER NOT NULL,
  text TEXT NOT NULL,
  start_page INTEGER,
  end_page INTEGER,
  section_heading TEXT NOT NULL DEFAULT '',
  token_count INTEGER NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);
CREATE INDEX chunks_document ON chunks(document_id, chunk_index);
CREATE INDEX chunks_kb ON chunks(kb_id);

-- Keyword index over chunk text, kept in step with chunks by triggers (also on cascaded deletes).
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  text, content='chunks', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;

-- Which embedding model made the stored vectors (one model per database; see store/vectors.ts).
CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`,
};
