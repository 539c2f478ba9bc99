// Chunk rows and their vectors. A chunk's rowid joins it to its vector (chunk_vectors, inserted here, removed
// in the background once the chunk goes: store/vector-purger.ts); triggers also log each write for the
// search index (search_log).
import type { Db } from "./db.ts";
import { newId } from "./ids.ts";
import { parseJsonObject } from "./json.ts";
import { invalidCursor, toPage, type Page } from "./pagination.ts";
import { getSetting, setSetting } from "./settings.ts";
import { VECTOR_TABLE } from "./vectors.ts";

const NEXT_CHUNK_ROWID = "next_chunk_rowid";

interface ChunkRow {
  id: string;
  document_id: string;
  kb_id: string;
  text: string;
  chunk_index: number;
  start_page: number | null;
  end_page: number;
  section_heading: string;
  token_count: number;
  metadata: string;
  created_at: string;
}

export type Chunk = Omit<ChunkRow, "metadata"> & { metadata: Record<string, unknown> };

export interface NewChunk {
  text: string;
  chunkIndex: number;
  startPage: number | null;
  endPage: number;
  sectionHeading: string;
  tokenCount: number;
  metadata: Record<string, unknown>;
  embedding: Float32Array;
}

const COLUMNS = "id, document_id, kb_id, text, chunk_index, start_page, end_page, section_heading, token_count, metadata, created_at";

function toChunk(row: ChunkRow): Chunk {
  return { ...row, metadata: parseJsonObject(row.metadata) };
}

/**
 * Ordered by chunk_index; the cursor is the last chunk_index seen, written as it is ("9": the chunks after
 * chunk_index 9), the spec's "cursor based on chunk_index". A client may write one itself.
 */
export function listChunks(db: Db, documentId: string, limit: number, cursor?: string): Page<Chunk> {
  if (cursor && !/^[0-9]+$/.test(cursor)) throw invalidCursor();
  const after = cursor ? Math.min(Number(cursor), Number.MAX_SAFE_INTEGER) : -1; // past every chunk: an empty page
  const rows = db
    .query<ChunkRow, [string, number, number]>(
      `SELECT ${COLUMNS} FROM chunks WHERE document_id = ? AND chunk_index > ? ORDER BY chunk_index LIMIT ?`,
    )
    .all(documentId, after, limit + 1);
  return toPage(rows, limit, (r) => String(r.chunk_index), toChunk);
}

/**
 * Reserves `count` consecutive rowids for a document's chunks, above every rowid a chunk has had, so none is
 * handed out twice (a deleted chunk's vector may still wait for the purger under its rowid). The chunks can
 * then be written over several transactions (ingest/indexer.ts) and still make one range, which is how
 * search reads a document's chunks. Call inside a write transaction.
 */
export function reserveChunkRowids(db: Db, count: number): number {
  const { used } = db
    .query<{ used: number }, []>("SELECT MAX(COALESCE((SELECT MAX(rowid) FROM chunks), 0), COALESCE((SELECT MAX(rowid) FROM vector_purge), 0)) AS used")
    .get()!;
  const next = Math.max(Number(getSetting(db, NEXT_CHUNK_ROWID) ?? 1), used + 1);
  setSetting(db, NEXT_CHUNK_ROWID, String(next + count));
  return next;
}

/** Inserts chunks with their vectors, the i-th at rowid firstRowid + i (reserved by reserveChunkRowids). */
export function insertChunks(db: Db, document: { id: string; kb_id: string }, chunks: NewChunk[], firstRowid: number, now: Date): void {
  const insertChunk = db.query(
    `INSERT INTO chunks (rowid, id, document_id, kb_id, text, chunk_index, start_page, end_page, section_heading, token_count,
       metadata, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertVector = db.query(`INSERT INTO ${VECTOR_TABLE} (rowid, embedding) VALUES (?, ?)`);
  const createdAt = now.toISOString();
  chunks.forEach((chunk, i) => {
    insertChunk.run(
      firstRowid + i,
      newId("chk", now.getTime()),
      document.id,
      document.kb_id,
      chunk.text,
      chunk.chunkIndex,
      chunk.startPage,
      chunk.endPage,
      chunk.sectionHeading,
      chunk.tokenCount,
      JSON.stringify(chunk.metadata),
      createdAt,
    );
    insertVector.run(firstRowid + i, chunk.embedding);
  });
}

/** Records the rowid range of a document's chunks (search reads them by it once the document is ready). */
export function recordChunkRange(db: Db, documentId: string, first: number, last: number): void {
  db.query("UPDATE documents SET first_chunk_rowid = ?, last_chunk_rowid = ? WHERE id = ?").run(first, last, documentId);
}

/** Deletes up to `limit` of the document's chunks (those with rowids below `below`); returns how many went. */
export function deleteSomeChunks(db: Db, documentId: string, limit: number, below = Number.MAX_SAFE_INTEGER): number {
  return db.query("DELETE FROM chunks WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ? AND rowid < ? LIMIT ?)").run(documentId, below, limit)
    .changes;
}

/** Removes a document's chunks; their vectors are queued for the purger (migration 022). */
export function deleteChunksOf(db: Db, documentId: string): void {
  db.query("DELETE FROM chunks WHERE document_id = ?").run(documentId);
  db.query("UPDATE documents SET first_chunk_rowid = NULL, last_chunk_rowid = NULL WHERE id = ?").run(documentId);
}
