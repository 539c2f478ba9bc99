// Documents as the API sees them: accepting uploads, text and replacements into the queue (with the
// plan's limits), metadata changes, deletion, and reading documents and chunks. Every call first checks
// that the knowledge base belongs to the caller (NOT_FOUND otherwise).
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import type { Db } from "../store/db.ts";
import { writeTxWhenFree } from "../store/db.ts";
import type { Clock } from "../clock.ts";
import type { AccountRow } from "../store/accounts.ts";
import type { FileStore } from "../store/files.ts";
import { newId } from "../store/ids.ts";
import type { Page } from "../store/pagination.ts";
import { assertKnowledgeBaseOwned } from "../store/knowledge-bases.ts";
import type { Deletions } from "../store/deletions.ts";
import {
  findDocumentRow,
  getDocument,
  insertDocument,
  isProcessing,
  listDocuments,
  setDocumentMetadata,
  setReplacementFile,
  type Document,
  type DocumentListOptions,
} from "../store/documents.ts";
import { listChunks, type Chunk } from "../store/chunks.ts";
import { assertDocumentCapacity, assertPagesAvailable, assertTrialActive } from "../billing/usage.ts";
import { notFound, QuarryError } from "../errors.ts";
import { enqueue } from "./queue.ts";
import { checkUploadFile, documentName } from "./upload-rules.ts";
import { isGone } from "../file-errors.ts";

export interface DocumentServiceDeps {
  db: Db;
  files: FileStore;
  deletions: Deletions;
  clock: Clock;
  limitsEnabled: boolean;
  /** Called after a document was queued or deleted: wakes the workers, which cancel a deleted document's job. */
  queueChanged(): void;
}

export interface UploadInput {
  file: File;
  metadata?: Record<string, unknown>;
}

export interface TextInput {
  text: string;
  name?: string;
  metadata?: Record<string, unknown>;
}

interface NewFile {
  name: string;
  fileType: string;
  data: Blob | Uint8Array;
  size: number;
}

export class DocumentService {
  constructor(private readonly deps: DocumentServiceDeps) {}

  list(account: AccountRow, kbId: string, options: DocumentListOptions): Page<Document> {
    assertKnowledgeBaseOwned(this.deps.db, account.id, kbId);
    return listDocuments(this.deps.db, kbId, options);
  }

  get(account: AccountRow, kbId: string, id: string): Document {
    assertKnowledgeBaseOwned(this.deps.db, account.id, kbId);
    return getDocument(this.deps.db, kbId, id);
  }

  chunks(account: AccountRow, kbId: string, id: string, limit: number, cursor?: string): Page<Chunk> {
    this.get(account, kbId, id);
    return listChunks(this.deps.db, id, limit, cursor);
  }

  upload(account: AccountRow, kbId: string, input: UploadInput): Promise<Document> {
    const checked = checkUploadFile(input.file);
    return this.add(account, kbId, { ...checked, data: input.file }, input.metadata ?? {});
  }

  /** Raw text becomes a .txt document; the default name is text-<created_at>.txt. */
  addText(account: AccountRow, kbId: string, input: TextInput): Promise<Document> {
    const now = this.deps.clock.now();
    const name = input.name === undefined ? `text-${now.toISOString()}.txt` : documentName(input.name, "name");
    // NUL characters mean nothing in text, and a stored .txt holding them would be read as a binary file.
    const data = new TextEncoder().encode(input.text.replaceAll("\u0000", ""));
    return this.add(account, kbId, { name, fileType: "txt", data, size: data.byteLength }, input.metadata ?? {}, now);
  }

  /** A new file for a ready or failed document: same id, metadata unless given, re-processed from pending. */
  async replace(account: AccountRow, kbId: string, id: string, input: UploadInput): Promise<Document> {
    const { db, clock } = this.deps;
    const file = { ...checkUploadFile(input.file), data: input.file };
    const current = this.get(account, kbId, id);
    assertNotProcessing(current);
    this.assertCanStore(account, file.size - (current.file_size_bytes ?? 0), 0);
    const storagePath = await this.store(kbId, id, file, () => this.get(account, kbId, id));
    let previousPath: string | null;
    try {
      previousPath = await writeTxWhenFree(db, () => {
        const document = this.get(account, kbId, id);
        assertNotProcessing(document);
        this.assertCanStore(account, file.size - (document.file_size_bytes ?? 0), 0);
        setReplacementFile(db, id, { ...file, fileSizeBytes: file.size, storagePath, metadata: input.metadata, now: clock.now() });
        enqueue(db, id, clock.now());
        return document.storage_path;
      });
    } catch (error) {
      this.removeStored(storagePath);
      throw error;
    }
    if (previousPath) this.removeStored(previousPath);
    return this.queued(kbId, id);
  }

  /** Replaces the metadata; the document is not processed again. */
  updateMetadata(account: AccountRow, kbId: string, id: string, metadata: Record<string, unknown>): Promise<Document> {
    const { db, clock } = this.deps;
    return writeTxWhenFree(db, () => {
      this.get(account, kbId, id);
      setDocumentMetadata(db, id, metadata, clock.now());
      return getDocument(db, kbId, id);
    });
  }

  /**
   * Removes the document, its chunks, vectors and keyword rows, its job (cancelled if running), and its
   * stored file; a large document's chunks in slices (store/deletions.ts), which this waits for.
   */
  async remove(account: AccountRow, kbId: string, id: string): Promise<void> {
    const { db } = this.deps;
    // Found even while being deleted, unlike get(): a DELETE at the same time waits for the same deletion,
    // and one retried after a failed deletion finishes it.
    const check = () => {
      assertKnowledgeBaseOwned(db, account.id, kbId);
      if (findDocumentRow(db, id)?.kb_id !== kbId) throw notFound("Document", id);
    };
    const deleted = this.deps.deletions.deleteDocument(kbId, id, check);
    this.deps.queueChanged();
    await deleted;
  }

  /** `now` is the document's created_at (and the time in its id). */
  private async add(account: AccountRow, kbId: string, file: NewFile, metadata: Record<string, unknown>, now = this.deps.clock.now()): Promise<Document> {
    const { db } = this.deps;
    assertKnowledgeBaseOwned(db, account.id, kbId);
    this.assertCanStore(account, file.size, 1);
    const id = newId("doc", now.getTime());
    const storagePath = await this.store(kbId, id, file, () => assertKnowledgeBaseOwned(db, account.id, kbId));
    try {
      await writeTxWhenFree(db, () => {
        assertKnowledgeBaseOwned(db, account.id, kbId);
        this.assertCanStore(account, file.size, 1);
        insertDocument(db, { id, kbId, accountId: account.id, name: file.name, fileType: file.fileType, fileSizeBytes: file.size, metadata, storagePath, now });
        enqueue(db, id, now);
      });
    } catch (error) {
      this.deps.files.removeDocument(kbId, id);
      throw error;
    }
    return this.queued(kbId, id);
  }

  /** The document as accepted (pending), read before a worker can pick it up; then the workers are woken. */
  private queued(kbId: string, id: string): Document {
    const document = getDocument(this.deps.db, kbId, id);
    this.deps.queueChanged();
    return document;
  }

  /** Trial still running, page allowance not used up, and room for the documents and bytes (spec 8.1). */
  private assertCanStore(account: AccountRow, addBytes: number, addDocuments: number): void {
    const { db, clock, limitsEnabled } = this.deps;
    const now = clock.now();
    assertTrialActive(account, now, limitsEnabled);
    assertPagesAvailable(db, account, now, limitsEnabled);
    assertDocumentCapacity(db, account, addBytes, addDocuments, limitsEnabled);
  }

  /**
   * Each upload gets its own folder, files/<kb>/<doc>/<upload>/<name>, so a replacement never overwrites
   * the file it replaces before the replacement is accepted. The stored name ends in the file type
   * (raw text named "notes" is stored as notes.txt).
   */
  private async store(kbId: string, id: string, file: NewFile, stillThere: () => void): Promise<string> {
    const upload = crypto.randomUUID().slice(0, 8);
    const extension = `.${file.fileType}`;
    const storedName = file.name.toLowerCase().endsWith(extension) ? file.name : file.name + extension;
    try {
      return await this.deps.files.save(kbId, `${id}/${upload}`, storedName, file.data);
    } catch (error) {
      // A delete of the document or knowledge base meanwhile removed the folder being written: 404, not 500.
      if (isGone(error)) stillThere();
      throw error;
    }
  }

  private removeStored(storagePath: string): void {
    rmSync(dirname(this.deps.files.absolute(storagePath)), { recursive: true, force: true });
  }
}

function assertNotProcessing(document: Document): void {
  if (isProcessing(document.status)) {
    throw new QuarryError("CONFLICT", "Document is still processing", { status: document.status });
  }
}
