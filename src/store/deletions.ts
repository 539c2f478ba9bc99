// Deleting knowledge bases and documents without holding up every other request. One transaction costs
// ~9 µs a chunk (63 ms for a document of 7,000 chunks, 8.6 s for a knowledge base of a million), and every
// writer waits for it, so rows go ROWS_PER_SLICE per transaction with the event loop free in between (the
// chunks' vectors are queued for store/vector-purger.ts). The mark each deletion starts with is in the
// database: a deletion a stop interrupts is finished by the next start.
//
// A knowledge base is marked deleting and the request ends there: from then on it is not found, listed
// or counted, and its ingestion jobs are withdrawn. In the background its chunks, then its documents, go
// in slices; a last transaction deletes the row, and with it anything written meanwhile (foreign keys and
// triggers); then its stored files go.
//
// A document is marked deleting: from then on other requests do not find or list it, search leaves it out
// (search/kb-documents.ts, hits.ts) and its job is withdrawn. Its chunks go in slices while the request
// waits (~15 ms of it per 500 chunks), then its row and stored file.
import { writeTx, writeTxWhenFree, type Db } from "./db.ts";
import type { FileStore } from "./files.ts";
import { assertKnowledgeBaseOwned } from "./knowledge-bases.ts";
import { deleteSomeChunks } from "./chunks.ts";

/** Rows deleted per transaction: ~5 ms. */
export const ROWS_PER_SLICE = 500;
/**
 * The pause between two slices. Back to back, slices kept the write lock so busy that the index worker's
 * writes waited over a second for it (SQLite's busy wait sleeps between its tries).
 */
export const SLICE_PAUSE_MS = 10;

/** The documents whose deletion a start finishes (read from their own index, migration 006). */
export const DELETING_DOCUMENTS_SQL = "SELECT id, kb_id FROM documents WHERE deleting = 1";

/**
 * Runs `slice` (deletes up to ROWS_PER_SLICE rows, returns how many) one write transaction at a time, with
 * a pause between, until it deletes fewer. False when `stopped` says so first.
 */
export async function deleteInSlices(db: Db, slice: (limit: number) => number, stopped = () => false): Promise<boolean> {
  for (;;) {
    if (stopped()) return false;
    if ((await writeTxWhenFree(db, () => slice(ROWS_PER_SLICE))) < ROWS_PER_SLICE) return true;
    await Bun.sleep(SLICE_PAUSE_MS);
  }
}

export class Deletions {
  private stopped = false;
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly files: FileStore,
  ) {}

  /** Marks the knowledge base (NOT_FOUND unless the account owns it) and deletes it in the background. */
  deleteKnowledgeBase(accountId: string, id: string): void {
    writeTx(this.db, () => {
      assertKnowledgeBaseOwned(this.db, accountId, id);
      this.db.query("UPDATE knowledge_bases SET deleting = 1 WHERE id = ?").run(id);
      this.db.query("DELETE FROM ingest_jobs WHERE document_id IN (SELECT id FROM documents WHERE kb_id = ?)").run(id);
    });
    void this.track(`kb:${id}`, () => this.finishKnowledgeBase(id));
  }

  /**
   * Marks the document (after `check`, in the same transaction: it throws NOT_FOUND for another caller's)
   * and resolves once it is deleted, or once a stop has left the rest to the next start.
   */
  deleteDocument(kbId: string, id: string, check: () => void): Promise<void> {
    writeTx(this.db, () => {
      check();
      this.db.query("UPDATE documents SET deleting = 1 WHERE id = ?").run(id);
      this.db.query("DELETE FROM ingest_jobs WHERE document_id = ?").run(id);
    });
    return this.track(`doc:${id}`, () => this.finishDocument(kbId, id));
  }

  /** At startup: finishes the deletions a stop interrupted. */
  resume(): void {
    for (const { id } of this.db.query<{ id: string }, []>("SELECT id FROM knowledge_bases WHERE deleting = 1").all()) {
      void this.track(`kb:${id}`, () => this.finishKnowledgeBase(id));
    }
    const documents = this.db.query<{ id: string; kb_id: string }, []>(DELETING_DOCUMENTS_SQL).all();
    for (const { id, kb_id } of documents) void this.track(`doc:${id}`, () => this.finishDocument(kb_id, id));
  }

  /** Waits for the deletions in progress to reach the end of a slice; the next start finishes them. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running.values());
  }

  /** Resolves when every deletion started so far has finished (for tests). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  /**
   * The deletion of `key` under way, or `work` started. The one that starts it gets its failure (a DELETE
   * answers 500); the record of it never rejects (the next start finishes a failed one).
   */
  private track(key: string, work: () => Promise<void>): Promise<void> {
    const under = this.running.get(key);
    if (under) return under;
    const done = work();
    const settled = done
      .catch((error: Error) => console.error(`${key.slice(key.indexOf(":") + 1)}: deletion not finished (${error.message}); the next start finishes it`))
      .finally(() => this.running.delete(key));
    this.running.set(key, settled);
    return done;
  }

  private async finishKnowledgeBase(id: string): Promise<void> {
    await Bun.sleep(SLICE_PAUSE_MS); // the DELETE answers first
    const chunks = this.db.query("DELETE FROM chunks WHERE rowid IN (SELECT rowid FROM chunks WHERE kb_id = ? LIMIT ?)");
    const documents = this.db.query("DELETE FROM documents WHERE id IN (SELECT id FROM documents WHERE kb_id = ? LIMIT ?)");
    for (const slice of [chunks, documents]) {
      if (!(await deleteInSlices(this.db, (limit) => slice.run(id, limit).changes, () => this.stopped))) return;
    }
    await writeTxWhenFree(this.db, () => this.db.query("DELETE FROM knowledge_bases WHERE id = ? AND deleting = 1").run(id));
    this.files.removeKnowledgeBase(id);
  }

  private async finishDocument(kbId: string, id: string): Promise<void> {
    if (!(await deleteInSlices(this.db, (limit) => deleteSomeChunks(this.db, id, limit), () => this.stopped))) return;
    await writeTxWhenFree(this.db, () => this.db.query("DELETE FROM documents WHERE id = ? AND deleting = 1").run(id));
    this.files.removeDocument(kbId, id);
  }
}
