// The last pipeline step and the failure path, each one write transaction: chunks, vectors and keyword
// rows of a document change together with its status, its job and the page meter, so search never
// sees a half-indexed document and a failed one counts nothing.
import type { Db } from "../store/db.ts";
import { writeTx } from "../store/db.ts";
import { findAccountById } from "../store/accounts.ts";
import { deleteChunksOf, insertChunks, type NewChunk } from "../store/chunks.ts";
import { findDocumentRow, markFailed, markReady, type DocumentRow } from "../store/documents.ts";
import { consumePages } from "../billing/usage.ts";
import { removeJob } from "./queue.ts";

const TEXT_BYTES_PER_PAGE = 2400;

/** Pages metered for a document (spec 8.3): rich types their real pages, text types one per ~2,400 bytes. */
export function meteredPages(pageCount: number | null, fileSizeBytes: number | null): number {
  return pageCount ?? Math.max(1, Math.ceil((fileSizeBytes ?? 0) / TEXT_BYTES_PER_PAGE));
}

/**
 * Swaps the document's chunks for the new ones, counts its pages and marks it ready. Returns false (and
 * writes nothing) when the document was deleted or left the embedding step meanwhile. Throws
 * USAGE_LIMIT_EXCEEDED, writing nothing, when the pages would overrun the allowance.
 */
export function completeDocument(
  db: Db,
  documentId: string,
  pageCount: number | null,
  chunks: NewChunk[],
  now: Date,
  limitsEnabled: boolean,
): boolean {
  return writeTx(db, () => {
    const document = findDocumentRow(db, documentId);
    if (!document || document.status !== "embedding") return false;
    const account = findAccountById(db, document.account_id);
    if (!account) return false;
    consumePages(db, account, meteredPages(pageCount, document.file_size_bytes), now, limitsEnabled);
    deleteChunksOf(db, documentId);
    insertChunks(db, document, chunks, now);
    markReady(db, documentId, chunks.length, pageCount, now);
    removeJob(db, documentId);
    return true;
  });
}

/** Marks the document failed with a message for the user; it keeps no chunks (a failed replacement neither). */
export function failDocument(db: Db, documentId: string, detail: string, now: Date): DocumentRow | null {
  return writeTx(db, () => {
    const document = findDocumentRow(db, documentId);
    if (!document) return null;
    deleteChunksOf(db, documentId);
    markFailed(db, documentId, detail, now);
    removeJob(db, documentId);
    return findDocumentRow(db, documentId);
  });
}
