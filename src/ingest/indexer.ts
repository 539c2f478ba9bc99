// The last pipeline step and the failure path: a document's chunks and vectors are written, and it becomes
// ready together with its job and the page meter, so search never sees a half-indexed document and a
// failed one counts nothing.
import type { Db } from "../store/db.ts";
import { writeTx } from "../store/db.ts";
import { findAccountById } from "../store/accounts.ts";
import { deleteChunksOf, deleteSomeChunks, insertChunks, recordChunkRange, reserveChunkRowids, type NewChunk } from "../store/chunks.ts";
import { findDocumentRow, markFailed, markReady, type DocumentRow } from "../store/documents.ts";
import { assertPagesFit, consumePages, usageFor } from "../billing/usage.ts";
import { accountPlan } from "../billing/limits.ts";
import { pagesOverrunMessage, type PageAllowance } from "./parsers/page-limit.ts";
import { QuarryError, usageLimitExceeded } from "../errors.ts";
import { removeJob } from "./queue.ts";
import { deleteInSlices, ROWS_PER_SLICE, SLICE_PAUSE_MS } from "../store/deletions.ts";

const TEXT_BYTES_PER_PAGE = 2400;

/** Pages metered for a document (spec 8.3): rich types their real pages, text types one per ~2,400 bytes. */
export function meteredPages(pageCount: number | null, fileSizeBytes: number | null): number {
  return pageCount ?? Math.max(1, Math.ceil((fileSizeBytes ?? 0) / TEXT_BYTES_PER_PAGE));
}

/** The account's pages left this period, given to the parser (null with limits off, or the account gone). */
export function pageAllowance(db: Db, accountId: string, now: Date, limitsEnabled: boolean): PageAllowance | null {
  const account = limitsEnabled ? findAccountById(db, accountId) : null;
  if (!account) return null;
  const limit = accountPlan(account).pagesPerMonth;
  return { left: Math.max(0, limit - usageFor(db, account, now).pages_processed), limit };
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

/** Chunks written per transaction: ~11 ms of holding the write lock (~25 µs for sqlite-vec's insert, ~30 for the row). */
const CHUNKS_PER_WRITE = 200;

/**
 * Swaps the document's chunks for the new ones, counts its pages and marks it ready. Returns false when the
 * document was deleted or left the embedding step meanwhile. Throws USAGE_LIMIT_EXCEEDED when the pages
 * would overrun the allowance (the caller fails the document, which removes what was written).
 *
 * A document of up to CHUNKS_PER_WRITE chunks takes one transaction. A larger one is written a slice per
 * transaction, with pauses between (one transaction for 7,000 chunks held the write lock 0.4 s, 2 s for a
 * replacement, and every writer waited, a search's usage count among them): first its old chunks go, then
 * the new ones are written under a reserved rowid range, and the last transaction marks it ready. Until
 * then it is not ready, so search never sees a half-written document.
 */
export async function completeDocument(
  db: Db,
  documentId: string,
  pageCount: number | null,
  chunks: NewChunk[],
  now: Date,
  limitsEnabled: boolean,
): Promise<boolean> {
  let firstRowid: number | null = null;
  let written = 0;
  for (;;) {
    const step = writeTx(db, (): "dropped" | "more" | "ready" => {
      const document = findDocumentRow(db, documentId);
      if (!document || document.deleting || document.status !== "embedding") return "dropped";
      if (firstRowid === null) {
        firstRowid = reserveChunkRowids(db, chunks.length);
        // Recorded at once: search knows a document's chunks by their range, and while no document not ready
        // has one it searches every chunk, these too.
        recordChunkRange(db, documentId, firstRowid, firstRowid + chunks.length - 1);
      }
      if (deleteSomeChunks(db, documentId, ROWS_PER_SLICE, firstRowid) === ROWS_PER_SLICE) return "more";
      const slice = chunks.slice(written, written + CHUNKS_PER_WRITE);
      insertChunks(db, document, slice, firstRowid + written, now);
      written += slice.length;
      if (written < chunks.length) return "more";
      const account = findAccountById(db, document.account_id);
      if (!account) return "dropped";
      const pages = meteredPages(pageCount, document.file_size_bytes);
      try {
        consumePages(db, account, pages, now, limitsEnabled);
      } catch (error) {
        throw error instanceof QuarryError ? pagesWouldOverrun(error, pages) : error;
      }
      markReady(db, documentId, chunks.length, pageCount, now);
      removeJob(db, documentId);
      return "ready";
    });
    if (step !== "more") return step === "ready";
    await Bun.sleep(SLICE_PAUSE_MS); // lets the other connections' writers in
  }
}

/** The allowance error restated for a document: how many pages it has and how many were left. */
function pagesWouldOverrun(error: QuarryError, pages: number): QuarryError {
  const { limit, used } = error.details as { limit: number; used: number };
  const left = Math.max(0, limit - used);
  return usageLimitExceeded(pagesOverrunMessage(pages, { left, limit }), error.details ?? {});
}

/**
 * Marks the document failed with a message for the user; it keeps no chunks (a failed replacement neither).
 * `pageCount`: recorded when the failure found it (a document over the page limit); otherwise kept as it was.
 */
export function failDocument(db: Db, documentId: string, detail: string, now: Date, pageCount: number | null = null): DocumentRow | null {
  return writeTx(db, () => {
    if (!mayFail(findDocumentRow(db, documentId))) return null;
    deleteChunksOf(db, documentId);
    markFailed(db, documentId, detail, now, pageCount);
    removeJob(db, documentId);
    return findDocumentRow(db, documentId);
  });
}

/**
 * failDocument, once the document's chunks are deleted a slice at a time: a failed replacement's old ones
 * went in failDocument's one transaction, ~9 µs a chunk with every writer waiting.
 */
export async function failDocumentInSlices(db: Db, documentId: string, detail: string, now: Date, pageCount: number | null = null): Promise<DocumentRow | null> {
  await deleteInSlices(db, (limit) => (mayFail(findDocumentRow(db, documentId)) ? deleteSomeChunks(db, documentId, limit) : 0));
  return failDocument(db, documentId, detail, now, pageCount);
}

/**
 * Not a document that is gone, being deleted (its deletion removes its chunks), or ready: one that finished
 * meanwhile (a timed-out job's worker completing before it was stopped) keeps its chunks.
 */
function mayFail(document: DocumentRow | null): boolean {
  return document !== null && !document.deleting && document.status !== "ready";
}
