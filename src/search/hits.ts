// Loads what a search result shows for the chosen chunks. The ready-status join is the final guard:
// a chunk whose document stopped being ready since the index was read is never returned.
import type { Db } from "../store/db.ts";
import { searchableDocumentSql } from "../store/documents.ts";

export interface ChunkHit {
  rowid: number;
  chunk_id: string;
  document_id: string;
  document_name: string;
  text: string;
  chunk_index: number;
  start_page: number | null;
  end_page: number;
  section_heading: string;
  document_metadata: string;
}

/**
 * The chunks of `rowids` that are in the knowledge base and belong to ready documents, by rowid. The
 * unary + keeps SQLite from looking the rowids up through the (kb_id, rowid) index instead of the table
 * itself: at 1M chunks, 10 random rows took 1.1 ms through the index and 0.65 ms directly.
 */
export function loadChunkHits(db: Db, kbId: string, rowids: number[]): Map<number, ChunkHit> {
  if (rowids.length === 0) return new Map();
  const rows = db
    .query<ChunkHit, [string, string]>(
      `SELECT c.rowid, c.id AS chunk_id, c.document_id, d.name AS document_name, c.text, c.chunk_index, c.start_page,
         c.end_page, c.section_heading, d.metadata AS document_metadata
       FROM chunks c JOIN documents d ON d.id = c.document_id
       WHERE c.rowid IN (SELECT value FROM json_each(?)) AND +c.kb_id = ? AND ${searchableDocumentSql("d")}`,
    )
    .all(JSON.stringify(rowids), kbId);
  return new Map(rows.map((row) => [row.rowid, row]));
}
