// The documents of one knowledge base as search needs them: metadata for filters, whether ready, and the
// rowid range of their chunks (a document's chunks are written together, so their rowids are contiguous;
// see store/migrations/021_search_log.ts). Loaded once, then kept up to date from the document change
// log (search_doc_log), rereading only the documents named there since the last refresh; should the log
// have been trimmed past that point (index-log.ts), everything is loaded again.
import { newMask } from "./mask.ts";
import type { Db } from "../store/db.ts";
import { parseJsonObject } from "../store/json.ts";
import type { DocumentPredicate } from "./filters.ts";

interface DocumentEntry {
  metadataJson: string;
  /** Parsed on first use by a filter. */
  metadata: Record<string, unknown> | null;
  ready: boolean;
  first: number;
  last: number;
}

type DocumentRow = [id: string, metadata: string, status: string, first: number | null, last: number | null];

const COLUMNS = "id, metadata, status, first_chunk_rowid, last_chunk_rowid";
/** Filter masks kept per knowledge base (each one byte per chunk rowid). */
const FILTER_MASKS = 4;

/** Chunks a search may return, as a mask indexed by chunk rowid (null: all of them). */
export interface Eligibility {
  mask: Uint8Array | null;
  /** Chunks the search considers (spec: chunks_searched). */
  count: number;
}

export class KbDocuments {
  private seq = -1;
  /**
   * Whether `documents` holds every document. Until a search needs a mask (a filter, or documents not
   * ready) or the knowledge base changes, only the counts are read: loading 50,000 documents takes
   * 100-300 ms, which the first search after a restart would otherwise wait for.
   */
  private loaded = false;
  private readonly documents = new Map<string, DocumentEntry>();
  private maxRowid = 0;
  private readyChunks = 0;
  private notReady = 0;
  private metadataBytes = 0;
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
      const oldest = this.db.query<{ seq: number | null }, []>("SELECT MIN(seq) AS seq FROM search_doc_log").get()?.seq ?? 0;
      if (this.seq < 0) this.countAll();
      else if (!this.loaded || this.seq < oldest - 1) this.loadAll();
      else this.reload(this.changedSince(this.seq));
      this.seq = seq;
      this.readyMask = null;
      this.filterMasks.clear();
    })();
  }

  /**
   * Chunks of ready documents that the filter accepts. `filterKey` (the filter's JSON) keeps the mask
   * for the next searches with the same filter until the knowledge base changes: building one runs the
   * filter over every document (~10 ms for 50,000), and applications tend to repeat their filters.
   */
  eligibility(predicate: DocumentPredicate | null, filterKey?: string): Eligibility {
    if (!predicate && this.notReady === 0) return { mask: null, count: this.readyChunks };
    if (!this.loaded) {
      this.db.transaction(() => {
        this.loadAll();
        this.seq = this.latestSeq();
      })();
    }
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
    return this.documents.size * 200 + 3 * this.metadataBytes + masks;
  }

  private mask(accept: DocumentPredicate): Eligibility {
    const mask = newMask(this.maxRowid + 1);
    let count = 0;
    for (const doc of this.documents.values()) {
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

  private changedSince(seq: number): string[] {
    return this.db
      .query<{ document_id: string }, [string, number]>("SELECT DISTINCT document_id FROM search_doc_log WHERE kb_id = ? AND seq > ?")
      .all(this.kbId, seq)
      .map((row) => row.document_id);
  }

  /** The counts alone (documents stays empty). */
  private countAll(): void {
    const row = this.db
      .query<{ chunks: number | null; notReady: number | null; maxRowid: number | null; bytes: number | null }, [string]>(
        `SELECT SUM(CASE WHEN status = 'ready' THEN last_chunk_rowid - first_chunk_rowid + 1 ELSE 0 END) AS chunks,
                SUM(status != 'ready') AS notReady, MAX(last_chunk_rowid) AS maxRowid, SUM(LENGTH(metadata)) AS bytes
         FROM documents WHERE kb_id = ? AND first_chunk_rowid IS NOT NULL`,
      )
      .get(this.kbId);
    this.readyChunks = row?.chunks ?? 0;
    this.notReady = row?.notReady ?? 0;
    this.maxRowid = row?.maxRowid ?? 0;
    this.metadataBytes = row?.bytes ?? 0;
  }

  private loadAll(): void {
    this.documents.clear();
    this.readyChunks = 0;
    this.notReady = 0;
    this.maxRowid = 0;
    this.metadataBytes = 0;
    this.loaded = true;
    const rows = this.db.query<DocumentRow, [string]>(`SELECT ${COLUMNS} FROM documents WHERE kb_id = ? AND first_chunk_rowid IS NOT NULL`);
    for (const row of rows.values(this.kbId) as DocumentRow[]) this.put(row);
  }

  private reload(ids: string[]): void {
    const read = this.db.query<DocumentRow, [string, string]>(`SELECT ${COLUMNS} FROM documents WHERE id = ? AND kb_id = ?`);
    for (const id of ids) {
      this.remove(id);
      const row = read.values(id, this.kbId)[0] as DocumentRow | undefined;
      if (row) this.put(row);
    }
  }

  private put([id, metadataJson, status, first, last]: DocumentRow): void {
    if (first === null || last === null) return;
    const ready = status === "ready";
    this.documents.set(id, { metadataJson, metadata: null, ready, first, last });
    this.maxRowid = Math.max(this.maxRowid, last);
    this.metadataBytes += metadataJson.length;
    if (ready) this.readyChunks += last - first + 1;
    else this.notReady++;
  }

  private remove(id: string): void {
    const doc = this.documents.get(id);
    if (!doc) return;
    this.documents.delete(id);
    this.metadataBytes -= doc.metadataJson.length;
    if (doc.ready) this.readyChunks -= doc.last - doc.first + 1;
    else this.notReady--;
  }
}
