// Chunk rows and their vectors. A chunk's rowid joins it to its vector (vec_chunks, inserted here, removed
// in the background once the chunk goes: store/vector-purger.ts); triggers also log each write for the
// search index (search_log).
import type { Db } from "./db.ts";
import { newId } from "./ids.ts";
import { parseJsonObject } from "./json.ts";
import { decodeCursor, toPage, type Page } from "./pagination.ts";
import { purgeReusedRowid } from "./vector-purger.ts";

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

/** Ordered by chunk_index; the cursor is the last chunk_index seen. */
export function listChunks(db: Db, documentId: string, limit: number, cursor?: string): Page<Chunk> {
  const after = cursor === undefined ? -1 : decodeCursor<number>(cursor, { kind: "chunks", owner: documentId }, "number");
  const rows = db
    .query<ChunkRow, [string, number, number]>(
      `SELECT ${COLUMNS} FROM chunks WHERE document_id = ? AND chunk_index > ? ORDER BY chunk_index LIMIT ?`,
    )
    .all(documentId, after, limit + 1);
  return toPage(rows, limit, { kind: "chunks", owner: documentId }, (r) => r.chunk_index, toChunk);
}

/** Inserts a document's chunks with their vectors. Call inside the transaction that makes it ready. */
export function insertChunks(db: Db, document: { id: string; kb_id: string }, chunks: NewChunk[], now: Date): void {
  const insertChunk = db.query<{ rowid: number }, (string | number | null)[]>(
    `INSERT INTO chunks (id, document_id, kb_id, text, chunk_index, start_page, end_page, section_heading, token_count,
       metadata, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING rowid`,
  );
  const insertVector = db.query("INSERT INTO vec_chunks (rowid, kb_id, embedding) VALUES (?, ?, ?)");
  const createdAt = now.toISOString();
  let first: number | null = null;
  let last: number | null = null;
  for (const chunk of chunks) {
    const { rowid } = insertChunk.get(
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
    )!;
    purgeReusedRowid(db, rowid);
    insertVector.run(rowid, document.kb_id, chunk.embedding);
    first ??= rowid;
    last = rowid;
  }
  db.query("UPDATE documents SET first_chunk_rowid = ?, last_chunk_rowid = ? WHERE id = ?").run(first, last, document.id);
}

/** Removes a document's chunks; their vectors are queued for the purger (migration 022). */
export function deleteChunksOf(db: Db, documentId: string): void {
  db.query("DELETE FROM chunks WHERE document_id = ?").run(documentId);
  db.query("UPDATE documents SET first_chunk_rowid = NULL, last_chunk_rowid = NULL WHERE id = ?").run(documentId);
}
