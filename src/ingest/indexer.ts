// The last pipeline step and the failure path, each one write transaction: chunks, vectors and keyword
// rows of a document change together with its status, its job and the page meter, so search never
// sees a half-indexed document and a failed one counts nothing.
import type { Db } from "../store/db.ts";
import { writeTx } from "../store/db.ts";
import { findAccountById } from "../store/accounts.ts";
import { deleteChunksOf, insertChunks, type NewChunk } from "../store/chunks.ts";
import { findDocumentRow, markFailed, markReady, type DocumentRow } from "../store/documents.ts";
import { assertPagesFit, consumePages } from "../billing/usage.ts";
import { QuarryError, usageLimitExceeded } from "../errors.ts";
import { removeJob } from "./queue.ts";

const TEXT_BYTES_PER_PAGE = 2400;

/** Pages metered for a document (spec 8.3): rich types their real pages, text types one per ~2,400 bytes. */
export function meteredPages(pageCount: number | null, fileSizeBytes: number | null): number {
  return pageCount ?? Math.max(1, Math.ceil((fileSizeBytes ?? 0) / TEXT_BYTES_PER_PAGE));
}

/**
 * Before the expensive steps: throws the same USAGE_LIMIT_EXCEEDED as completeDocument when the
 * document's pages already would not fit the allowance, so it fails at once instead of after embedding.
 */
export function assertDocumentPagesFit(db: Db, documentId: string, pageCount: number | null, now: Date, limitsEnabled: boolean): void {
  const document = findDocumentRow(db, documentId);
  const account = document && findAccountById(db, document.account_id);
  if (!document || !account) return;
  const pages = meteredPages(pageCount, document.file_size_bytes);
  try {
    assertPagesFit(db, account, pages, now, limitsEnabled);
  } catch (error) {
    throw error instanceof QuarryError ? pagesWouldOverrun(error, pages) : error;
  }
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
    const pages = meteredPages(pageCount, document.file_size_bytes);
    try {
      consumePages(db, account, pages, now, limitsEnabled);
    } catch (error) {
      throw error instanceof QuarryError ? pagesWouldOverrun(error, pages) : error;
    }
    deleteChunksOf(db, documentId);
    insertChunks(db, document, chunks, now);
    markReady(db, documentId, chunks.length, pageCount, now);
    removeJob(db, documentId);
    return true;
  });
}

/** The allowance error restated for a document: how many pages it has and how many were left. */
function pagesWouldOverrun(error: QuarryError, pages: number): QuarryError {
  const { limit, used } = error.details as { limit: number; used: number };
  const left = Math.max(0, limit - used);
  return usageLimitExceeded(
    `Document has ${pages} pages but only ${left} of the monthly allowance of ${limit} pages remain. ` +
      "Upgrade your plan or wait for the next billing period; nothing was counted.",
    error.details ?? {},
  );
}

/**
 * Marks the document failed with a message for the user; it keeps no chunks (a failed replacement neither).
 * `pageCount`: recorded when the failure found it (a document over the page limit); otherwise kept as it was.
 */
export function failDocument(db: Db, documentId: string, detail: string, now: Date, pageCount: number | null = null): DocumentRow | null {
  return writeTx(db, () => {
    const document = findDocumentRow(db, documentId);
    if (!document) return null;
    deleteChunksOf(db, documentId);
    markFailed(db, documentId, detail, now, pageCount);
    removeJob(db, documentId);
    return findDocumentRow(db, documentId);
  });
}
