// Reads the search index's change log (store/migrations/021_search_log.ts): the chunks written to and
// deleted from a knowledge base, in commit order.
import type { Db } from "../store/db.ts";

export interface LogEntry {
  seq: number;
  rowid: number;
  added: boolean;
}

/** Up to `limit` changes of the knowledge base after `afterSeq`, oldest first. */
export function readLog(db: Db, kbId: string, afterSeq: number, limit: number): LogEntry[] {
  return db
    .query<{ seq: number; chunk_rowid: number; added: number }, [string, number, number]>(
      "SELECT seq, chunk_rowid, added FROM search_log WHERE kb_id = ? AND seq > ? ORDER BY seq LIMIT ?",
    )
    .all(kbId, afterSeq, limit)
    .map((row) => ({ seq: row.seq, rowid: row.chunk_rowid, added: row.added === 1 }));
}

/** The newest change of the knowledge base (0 when none). */
export function lastSeq(db: Db, kbId: string): number {
  return db.query<{ seq: number | null }, [string]>("SELECT MAX(seq) AS seq FROM search_log WHERE kb_id = ?").get(kbId)?.seq ?? 0;
}

/** Those of `kbIds` with at least `count` logged changes their segment does not hold; reads no further than that. */
export function withPendingChanges(db: Db, kbIds: string[], count: number): string[] {
  const pending = db.query<{ n: number }, [string, string, number]>(
    `SELECT COUNT(*) AS n FROM (SELECT 1 FROM search_log WHERE kb_id = ?
       AND seq > COALESCE((SELECT watermark FROM search_segments WHERE kb_id = ?), 0) LIMIT ?)`,
  );
  return kbIds.filter((kbId) => pending.get(kbId, kbId, count)!.n >= count);
}

/** The knowledge bases with logged changes (the log holds only changes no segment has taken in yet). */
export function loggedKnowledgeBases(db: Db): string[] {
  return db.query<{ kb_id: string }, []>("SELECT DISTINCT kb_id FROM search_log").all().map((row) => row.kb_id);
}

/** Forgets the changes and segments of knowledge bases that no longer exist or are being deleted. */
export function trimDeletedKnowledgeBases(db: Db): void {
  db.query("DELETE FROM search_log WHERE kb_id NOT IN (SELECT id FROM knowledge_bases WHERE deleting = 0)").run();
  db.query("DELETE FROM search_segments WHERE kb_id NOT IN (SELECT id FROM knowledge_bases WHERE deleting = 0)").run();
}

/** Rows of the document change log kept; a search index that fell further behind reloads every document. */
const DOC_LOG_KEEP = 100_000;

export function trimDocumentLog(db: Db): void {
  db.query("DELETE FROM search_doc_log WHERE seq <= (SELECT MAX(seq) FROM search_doc_log) - ?").run(DOC_LOG_KEEP);
}
