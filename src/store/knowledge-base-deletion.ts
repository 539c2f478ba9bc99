// Deleting a knowledge base without holding up every other request. One transaction for it all cost ~9 µs
// a chunk (8.6 s for a million chunks, every request waiting), so:
// 1. a transaction marks it deleting: from then on it is not found, listed or counted, and its ingestion
//    jobs are withdrawn (running ones are cancelled when the pool is woken). The request ends here;
// 2. in the background, its chunks, then its documents, go ROWS_PER_SLICE per transaction, with the
//    event loop free in between (the chunks' vectors are queued for store/vector-purger.ts);
// 3. a last transaction deletes the row, and with it anything written meanwhile (foreign keys and
//    triggers); then its stored files go.
// The mark is in the database: a deletion a stop interrupts is finished by the next start.
import { writeTx, type Db } from "./db.ts";
import type { FileStore } from "./files.ts";
import { assertKnowledgeBaseOwned } from "./knowledge-bases.ts";

/** Chunks or documents deleted per transaction: ~5 ms. */
const ROWS_PER_SLICE = 500;
/**
 * The pause after each slice. Back to back, slices kept the write lock so busy that the index worker's
 * writes waited over a second for it (SQLite's busy wait sleeps between its tries).
 */
const PAUSE_MS = 10;

export class KnowledgeBaseDeleter {
  private stopped = false;
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly files: FileStore,
  ) {}

  /** Step 1 now (NOT_FOUND unless the account owns the knowledge base), the rest in the background. */
  delete(accountId: string, id: string): void {
    writeTx(this.db, () => {
      assertKnowledgeBaseOwned(this.db, accountId, id);
      this.db.query("UPDATE knowledge_bases SET deleting = 1 WHERE id = ?").run(id);
      this.db.query("DELETE FROM ingest_jobs WHERE document_id IN (SELECT id FROM documents WHERE kb_id = ?)").run(id);
    });
    this.finish(id);
  }

  /** At startup: finishes the deletions a stop interrupted. */
  resume(): void {
    for (const { id } of this.db.query<{ id: string }, []>("SELECT id FROM knowledge_bases WHERE deleting = 1").all()) this.finish(id);
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

  private finish(id: string): void {
    if (this.running.has(id)) return;
    const done = this.run(id)
      .catch((error: Error) => console.error(`knowledge base ${id}: deletion not finished (${error.message}); the next start finishes it`))
      .finally(() => this.running.delete(id));
    this.running.set(id, done);
  }

  /** Steps 2 and 3. */
  private async run(id: string): Promise<void> {
    const slices = [
      this.db.query("DELETE FROM chunks WHERE rowid IN (SELECT rowid FROM chunks WHERE kb_id = ? LIMIT ?)"),
      this.db.query("DELETE FROM documents WHERE id IN (SELECT id FROM documents WHERE kb_id = ? LIMIT ?)"),
    ];
    for (const slice of slices) {
      do {
        await Bun.sleep(PAUSE_MS);
        if (this.stopped) return;
      } while (writeTx(this.db, () => slice.run(id, ROWS_PER_SLICE).changes) > 0);
    }
    writeTx(this.db, () => this.db.query("DELETE FROM knowledge_bases WHERE id = ? AND deleting = 1").run(id));
    this.files.removeKnowledgeBase(id);
  }
}
