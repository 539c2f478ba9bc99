// Document rows. Status moves pending → parsing → chunking → embedding → ready, or to failed; every
// pipeline step is a guarded transition (from the expected status only), so a deleted or replaced
// document is never overwritten by a step that started before.
import type { Db } from "./db.ts";
import { parseJsonObject } from "./json.ts";
import { decodeCursor, listCursor, toPage, type Page } from "./pagination.ts";
import { notFound } from "../errors.ts";

export const DOCUMENT_STATUSES = ["pending", "parsing", "chunking", "embedding", "ready", "failed"] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

export type ProcessingStatus = Exclude<DocumentStatus, "ready" | "failed">;

/** Whether a document in `status` is queued or being processed. */
export function isProcessing(status: DocumentStatus): status is ProcessingStatus {
  return status !== "ready" && status !== "failed";
}

/** Statuses in which the document is queued or being processed, in pipeline order. */
export const PROCESSING_STATUSES: readonly ProcessingStatus[] = DOCUMENT_STATUSES.filter(isProcessing);

export interface DocumentRow {
  id: string;
  kb_id: string;
  account_id: string;
  name: string;
  file_type: string;
  file_size_bytes: number | null;
  page_count: number | null;
  chunk_count: number;
  status: DocumentStatus;
  error_detail: string | null;
  metadata: string;
  storage_path: string | null;
  created_at: string;
  updated_at: string;
  first_chunk_rowid: number | null;
  last_chunk_rowid: number | null;
  /** 1 while a DELETE removes its chunks (store/deletions.ts). */
  deleting: number;
}

export type Document = Omit<DocumentRow, "metadata" | "first_chunk_rowid" | "last_chunk_rowid" | "deleting"> & { metadata: Record<string, unknown> };

/** The document as the API shows it; the search index's chunk rowid range (migration 021) and the deletion mark stay internal. */
export function toDocument(row: DocumentRow): Document {
  const { first_chunk_rowid: _first, last_chunk_rowid: _last, deleting: _deleting, ...shown } = row;
  return { ...shown, metadata: parseJsonObject(row.metadata) };
}

export function findDocumentRow(db: Db, id: string): DocumentRow | null {
  return db.query<DocumentRow, [string]>("SELECT * FROM documents WHERE id = ?").get(id);
}

/**
 * The document, if it is in this knowledge base and not being deleted; otherwise NOT_FOUND. The caller has
 * checked the kb's owner.
 */
export function getDocument(db: Db, kbId: string, id: string): Document {
  const row = db.query<DocumentRow, [string, string]>("SELECT * FROM documents WHERE id = ? AND kb_id = ? AND deleting = 0").get(id, kbId);
  if (!row) throw notFound("Document", id);
  return toDocument(row);
}

export interface DocumentListOptions {
  limit: number;
  cursor?: string;
  status?: DocumentStatus;
}

/**
 * SQL for "the document can be searched": ready and not being deleted (store/deletions.ts). `alias`: the
 * documents table's alias in the query, if it has one.
 */
export function searchableDocumentSql(alias = ""): string {
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  return `(${column("status")} = 'ready' AND ${column("deleting")} = 0)`;
}

/** Newest first (none being deleted); the cursor is the last id seen (ids sort by creation time). */
export function listDocuments(db: Db, kbId: string, options: DocumentListOptions): Page<Document> {
  const where = ["kb_id = ?", "deleting = 0"];
  const params: (string | number)[] = [kbId];
  if (options.status) {
    where.push("status = ?");
    params.push(options.status);
  }
  if (options.cursor) {
    where.push("id < ?");
    params.push(decodeCursor(options.cursor, { kind: "documents", owner: kbId }));
  }
  const rows = db
    .query<DocumentRow, (string | number)[]>(`SELECT * FROM documents WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?`)
    .all(...params, options.limit + 1);
  return toPage(rows, options.limit, (r) => listCursor({ kind: "documents", owner: kbId }, r.id), toDocument);
}

export interface NewDocument {
  id: string;
  kbId: string;
  accountId: string;
  name: string;
  fileType: string;
  fileSizeBytes: number;
  metadata: Record<string, unknown>;
  storagePath: string;
  now: Date;
}

export function insertDocument(db: Db, input: NewDocument): void {
  const now = input.now.toISOString();
  db.query(
    `INSERT INTO documents (id, kb_id, account_id, name, file_type, file_size_bytes, status, metadata, storage_path,
       created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
  ).run(input.id, input.kbId, input.accountId, input.name, input.fileType, input.fileSizeBytes, JSON.stringify(input.metadata), input.storagePath, now, now);
}

export interface ReplacementFile {
  name: string;
  fileType: string;
  fileSizeBytes: number;
  storagePath: string;
  /** undefined keeps the current metadata. */
  metadata?: Record<string, unknown>;
  now: Date;
}

/**
 * Points the document at its new file and sends it back to pending. Its current chunks stay (and stay
 * searchable) until the new ones replace them in one transaction; page_count is unknown until parsed.
 */
export function setReplacementFile(db: Db, id: string, file: ReplacementFile): void {
  db.query(
    `UPDATE documents SET name = ?, file_type = ?, file_size_bytes = ?, storage_path = ?, metadata = COALESCE(?, metadata),
       status = 'pending', page_count = NULL, error_detail = NULL, updated_at = ?
     WHERE id = ?`,
  ).run(
    file.name,
    file.fileType,
    file.fileSizeBytes,
    file.storagePath,
    file.metadata === undefined ? null : JSON.stringify(file.metadata),
    file.now.toISOString(),
    id,
  );
}

export function setDocumentMetadata(db: Db, id: string, metadata: Record<string, unknown>, now: Date): void {
  db.query("UPDATE documents SET metadata = ?, updated_at = ? WHERE id = ?").run(JSON.stringify(metadata), now.toISOString(), id);
}

/** Moves the document from one status to the next; false when it is no longer in `from` (or gone). */
export function transitionStatus(
  db: Db,
  id: string,
  from: DocumentStatus,
  to: DocumentStatus,
  now: Date,
  changes: { pageCount?: number | null } = {},
): boolean {
  const result = db
    .query(
      `UPDATE documents SET status = ?, updated_at = ?, page_count = CASE WHEN ? THEN ? ELSE page_count END
       WHERE id = ? AND status = ? AND deleting = 0`,
    )
    .run(to, now.toISOString(), changes.pageCount !== undefined ? 1 : 0, changes.pageCount ?? null, id, from);
  return result.changes === 1;
}

/** Marks a processed document ready with its chunk count. */
export function markReady(db: Db, id: string, chunkCount: number, pageCount: number | null, now: Date): void {
  db.query(
    "UPDATE documents SET status = 'ready', chunk_count = ?, page_count = ?, error_detail = NULL, updated_at = ? WHERE id = ?",
  ).run(chunkCount, pageCount, now.toISOString(), id);
}

/** Marks the document failed; it has no chunks then (see store/chunks.ts deleteChunksOf). */
export function markFailed(db: Db, id: string, detail: string, now: Date, pageCount: number | null = null): void {
  db.query(
    "UPDATE documents SET status = 'failed', chunk_count = 0, error_detail = ?, page_count = COALESCE(?, page_count), updated_at = ? WHERE id = ?",
  ).run(detail, pageCount, now.toISOString(), id);
}

/** The documents a start queues again (read from their own index, migration 006). */
export const UNFINISHED_DOCUMENTS_SQL = "SELECT id FROM documents WHERE status NOT IN ('ready', 'failed') AND deleting = 0 ORDER BY id";

/** Documents that were queued or mid-way when the server stopped (not those being deleted: they are not processed again). */
export function unfinishedDocumentIds(db: Db): string[] {
  return db
    .query<{ id: string }, []>(UNFINISHED_DOCUMENTS_SQL)
    .all()
    .map((r) => r.id);
}

export function resetToPending(db: Db, id: string, now: Date): void {
  db.query("UPDATE documents SET status = 'pending', updated_at = ? WHERE id = ?").run(now.toISOString(), id);
}
