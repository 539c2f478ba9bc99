// The documents of one knowledge base as search needs them: metadata for filters, whether ready, and the
// rowid range of their chunks (a document's chunks are written together, so their rowids are contiguous;
// see store/migrations/021_search_log.ts). Loaded once, then kept up to date from the document change
// log (search_doc_log), rereading only the documents named there since the last refresh; should the log
// have been trimmed past that point (index-log.ts), everything is loaded again. The first load, which
// the first filtered search after a restart waits for, reads the documents in slices and lets other
// requests run between them: at 50,000 documents in one go it held the HTTP thread for 100-300 ms.
import { newMask } from "./mask.ts";
import type { Db } from "../store/db.ts";
import { parseJsonObject } from "../store/json.ts";
import type { DocumentPredicate } from "./filters.ts";
import { searchableDocumentSql } from "../store/documents.ts";

interface DocumentEntry {
  metadataJson: string;
  /** Parsed on first use by a filter. */
  metadata: Record<string, unknown> | null;
  ready: boolean;
  first: number;
  last: number;
}

type DocumentRow = [id: string, metadata: string, status: string, first: number | null, last: number | null];

const SEARCHABLE = searchableDocumentSql();
/** A document being deleted (store/deletions.ts) counts as not ready. */
const COLUMNS = "id, metadata, CASE WHEN deleting = 1 THEN 'deleting' ELSE status END, first_chunk_rowid, last_chunk_rowid";
/** A knowledge base's counts: what a search needs of its documents until it needs a mask. */
export const COUNTS_SQL = `SELECT SUM(CASE WHEN ${SEARCHABLE} THEN last_chunk_rowid - first_chunk_rowid + 1 ELSE 0 END) AS chunks,
  SUM(NOT ${SEARCHABLE}) AS notReady, MAX(last_chunk_rowid) AS maxRowid
  FROM documents WHERE kb_id = ? AND first_chunk_rowid IS NOT NULL`;
/** Documents read (and their metadata parsed) between two turns of the event loop in the first load. */
const LOAD_SLICE = 2000;
/** Filter masks kept per knowledge base (each one byte per chunk rowid). */
const FILTER_MASKS = 4;

/**
 * Reads the document counts (COUNTS_SQL) of the knowledge bases that have a search segment, most recently
 * built first, for at most `budgetMs` (one at least); returns the knowledge bases read. Called at startup
 * while the models load: the first search of a knowledge base reads them, and their pages may no longer be
 * in memory (1M chunks after a restart: that read took 31-40 ms, once 384 ms, and 6-18 ms after this; the
 * models' ~0.3 s load hides it).
 */
export function readDocumentCounts(db: Db, budgetMs: number): string[] {
  const started = performance.now();
  const counts = db.query(COUNTS_SQL);
  const read: string[] = [];
  for (const { kb_id } of db.query<{ kb_id: string }, []>("SELECT kb_id FROM search_segments ORDER BY watermark DESC").all()) {
    if (read.length > 0 && performance.now() - started >= budgetMs) break;
    counts.get(kb_id);
    read.push(kb_id);
  }
  return read;
}

/** Chunks a search may return, as a mask indexed by chunk rowid (null: all of them). */
export interface Eligibility {
  mask: Uint8Array | null;
  /** Chunks the search considers (spec: chunks_searched). */
  count: number;
}

/** The documents by id, with the counts search needs. */
class DocumentTable {
  readonly documents = new Map<string, DocumentEntry>();
  maxRowid = 0;
  readyChunks = 0;
  notReady = 0;
  metadataBytes = 0;

  put([id, metadataJson, status, first, last]: DocumentRow, parse = false): void {
    if (first === null || last === null) return;
    const ready = status === "ready";
    this.documents.set(id, { metadataJson, metadata: parse ? parseJsonObject(metadataJson) : null, ready, first, last });
    this.maxRowid = Math.max(this.maxRowid, last);
    this.metadataBytes += metadataJson.length;
    if (ready) this.readyChunks += last - first + 1;
    else this.notReady++;
  }

  remove(id: string): void {
    const doc = this.documents.get(id);
    if (!doc) return;
    this.documents.delete(id);
    this.metadataBytes -= doc.metadataJson.length;
    if (doc.ready) this.readyChunks -= doc.last - doc.first + 1;
    else this.notReady--;
  }
}

export class KbDocuments {
  private seq = -1;
  /**
   * Whether `documents` holds every document. Until a search needs a mask (a filter, or documents not
   * ready) or the knowledge base changes, only the counts are read: loading 50,000 documents takes
   * 100-300 ms, which the first search after a restart would otherwise wait for.
   */
  private loaded = false;
  /** The first load, while it runs. */
  private loading: Promise<void> | null = null;
  private table = new DocumentTable();
  private readyMask: Eligibility | null = null;
  /** Masks of recent filters by their JSON, least recently used first; dropped on any change. */
  private readonly filterMasks = new Map<string, Eligibility>();

  constructor(
    private readonly db: Db,
    private readonly kbId: string,
  ) {}

  /** Catches up with the database; one indexed read when nothing changed. */
  refresh(): void {
    const latest = this.latestSeq();
    if (latest === this.seq) return;
    this.db.transaction(() => {
      const seq = this.latestSeq();
      if (!this.loaded) this.countAll();
      else if (this.logTrimmedPast(this.seq)) this.loadAll();
      else this.reload(this.table, this.changedSince(this.seq));
      this.caughtUpTo(seq);
    })();
  }

  /**
   * Chunks of ready documents that the filter accepts. `filterKey` (the filter's JSON) keeps the mask
   * for the next searches with the same filter until the knowledge base changes: building one runs the
   * filter over every document (~10 ms for 50,000), and applications tend to repeat their filters.
   */
  async eligibility(predicate: DocumentPredicate | null, filterKey?: string): Promise<Eligibility> {
    if (!predicate && this.table.notReady === 0) return { mask: null, count: this.table.readyChunks };
    if (!this.loaded) await (this.loading ??= this.loadInSlices().finally(() => (this.loading = null)));
    if (!predicate) return (this.readyMask ??= this.mask(() => true));
    if (filterKey === undefined) return this.mask(predicate);
    let cached = this.filterMasks.get(filterKey);
    if (cached) this.filterMasks.delete(filterKey);
    else {
      cached = this.mask(predicate);
      if (this.filterMasks.size >= FILTER_MASKS) this.filterMasks.delete(this.filterMasks.keys().next().value!);
    }
    this.filterMasks.set(filterKey, cached);
    return cached;
  }

  /** Rough heap size, for the index memory budget. */
  get estimatedBytes(): number {
    let masks = this.readyMask?.mask?.byteLength ?? 0;
    for (const { mask } of this.filterMasks.values()) masks += mask?.byteLength ?? 0;
    return this.table.documents.size * 200 + 3 * this.table.metadataBytes + masks;
  }

  private mask(accept: DocumentPredicate): Eligibility {
    const mask = newMask(this.table.maxRowid + 1);
    let count = 0;
    for (const doc of this.table.documents.values()) {
      if (!doc.ready || !accept((doc.metadata ??= parseJsonObject(doc.metadataJson)))) continue;
      mask.fill(1, doc.first, doc.last + 1);
      count += doc.last - doc.first + 1;
    }
    return { mask, count };
  }

  private latestSeq(): number {
    return (
      this.db.query<{ seq: number | null }, [string]>("SELECT MAX(seq) AS seq FROM search_doc_log WHERE kb_id = ?").get(this.kbId)?.seq ?? 0
    );
  }

  /** Whether the log no longer holds every change after `seq` (index-log.ts trims it). */
  private logTrimmedPast(seq: number): boolean {
    const oldest = this.db.query<{ seq: number | null }, []>("SELECT MIN(seq) AS seq FROM search_doc_log").get()?.seq ?? 0;
    return seq < oldest - 1;
  }

  private changedSince(seq: number): string[] {
    return this.db
      .query<{ document_id: string }, [string, number]>("SELECT DISTINCT document_id FROM search_doc_log WHERE kb_id = ? AND seq > ?")
      .all(this.kbId, seq)
      .map((row) => row.document_id);
  }

  /** The counts alone (no documents, so no metadata in memory either), from an index (migration 025). */
  private countAll(): void {
    const row = this.db.query<{ chunks: number | null; notReady: number | null; maxRowid: number | null }, [string]>(COUNTS_SQL).get(this.kbId);
    this.table = new DocumentTable();
    this.table.readyChunks = row?.chunks ?? 0;
    this.table.notReady = row?.notReady ?? 0;
    this.table.maxRowid = row?.maxRowid ?? 0;
  }

  private loadAll(): void {
    this.table = new DocumentTable();
    this.loaded = true;
    const rows = this.db.query<DocumentRow, [string]>(`SELECT ${COLUMNS} FROM documents WHERE kb_id = ? AND first_chunk_rowid IS NOT NULL`);
    for (const row of rows.values(this.kbId) as DocumentRow[]) this.table.put(row);
  }

  /**
   * Loads every document LOAD_SLICE at a time, in id order, letting the event loop run between slices.
   * Documents changed meanwhile (the log past the sequence number read first) are reread at the end, in
   * the transaction that puts the new table in place.
   */
  private async loadInSlices(): Promise<void> {
    const since = this.latestSeq();
    const table = new DocumentTable();
    const slice = this.db.query<DocumentRow, [string, string]>(
      `SELECT ${COLUMNS} FROM documents WHERE kb_id = ? AND id > ? AND first_chunk_rowid IS NOT NULL ORDER BY id LIMIT ${LOAD_SLICE}`,
    );
    for (let after = ""; ; ) {
      const rows = slice.values(this.kbId, after) as DocumentRow[];
      for (const row of rows) table.put(row, true);
      if (rows.length < LOAD_SLICE) break;
      after = rows[rows.length - 1][0];
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.db.transaction(() => {
      if (this.logTrimmedPast(since)) this.loadAll();
      else {
        this.reload(table, this.changedSince(since));
        this.table = table;
        this.loaded = true;
      }
      this.caughtUpTo(this.latestSeq());
    })();
  }

  /** The table now holds every change up to `seq`: masks made before are stale. */
  private caughtUpTo(seq: number): void {
    this.seq = seq;
    this.readyMask = null;
    this.filterMasks.clear();
  }

  private reload(table: DocumentTable, ids: string[]): void {
    const read = this.db.query<DocumentRow, [string, string]>(`SELECT ${COLUMNS} FROM documents WHERE id = ? AND kb_id = ?`);
    for (const id of ids) {
      table.remove(id);
      const row = read.values(id, this.kbId)[0] as DocumentRow | undefined;
      if (row) table.put(row);
    }
  }
}
