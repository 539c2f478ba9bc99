// The store's counts and sizes for the metrics (http/metrics.ts). Each query reads a bounded index (the
// documents still being processed) or counts small tables, so a scrape holds the HTTP thread for well under
// a millisecond however many documents there are: counting every document by status took 13-16 ms at 50k
// documents, 164 ms with the table out of memory. Totals of processed documents come from counters instead.
import type { Db } from "./db.ts";
import { PROCESSING_STATUSES, type ProcessingStatus } from "./documents.ts";

export interface StoreStats {
  /** Documents waiting or being processed, by status (deleted ones not counted). */
  processing: Record<ProcessingStatus, number>;
  knowledgeBases: number;
  accounts: number;
  /** The database file's size, and the part of it SQLite holds free for reuse. */
  databaseBytes: number;
  freeBytes: number;
}

export function storeStats(db: Db): StoreStats {
  const processing = Object.fromEntries(PROCESSING_STATUSES.map((status) => [status, 0])) as Record<ProcessingStatus, number>;
  // The WHERE clause is the partial index documents_unfinished's, so that index is what is read.
  const rows = db
    .query<{ status: ProcessingStatus; n: number }, []>(
      "SELECT status, COUNT(*) AS n FROM documents WHERE status NOT IN ('ready', 'failed') AND deleting = 0 GROUP BY status",
    )
    .all();
  for (const { status, n } of rows) processing[status] = n;
  const counts = db
    .query<{ kbs: number; accounts: number; pages: number; free: number; pageSize: number }, []>(
      `SELECT (SELECT COUNT(*) FROM knowledge_bases WHERE deleting = 0) AS kbs, (SELECT COUNT(*) FROM accounts) AS accounts,
         (SELECT page_count FROM pragma_page_count()) AS pages, (SELECT freelist_count FROM pragma_freelist_count()) AS free,
         (SELECT page_size FROM pragma_page_size()) AS pageSize`,
    )
    .get()!;
  return {
    processing,
    knowledgeBases: counts.kbs,
    accounts: counts.accounts,
    databaseBytes: counts.pages * counts.pageSize,
    freeBytes: counts.free * counts.pageSize,
  };
}
