// The documents of one knowledge base as search needs them: metadata for filters, whether ready, and the
// rowid range of their chunks (a document's chunks are written together, so their rowids are contiguous;
// see store/migrations/021_search_log.ts). Kept up to date by refresh(), which rereads only when the
// knowledge base's generation moved (store/migrations/020_search_versions.ts).
import type { Db } from "../store/db.ts";
import { parseJsonObject } from "../store/json.ts";
import type { DocumentPredicate } from "./filters.ts";

interface DocumentEntry {
  metadataJson: string;
  metadata: Record<string, unknown>;
  ready: boolean;
  first: number;
  last: number;
}

interface DocumentRow {
  id: string;
  metadata: string;
  status: string;
  first_chunk_rowid: number;
  last_chunk_rowid: number;
}

/** Chunks a search may return, as a mask indexed by chunk rowid (null: all of them). */
export interface Eligibility {
  mask: Uint8Array | null;
  /** Chunks the search considers (spec: chunks_searched). */
  count: number;
}

export class KbDocuments {
  private generation = -1;
  private documents = new Map<string, DocumentEntry>();
  private maxRowid = 0;
  private readyChunks = 0;
  private allReady = true;
  private readyMask: Eligibility | null = null;

  constructor(
    private readonly db: Db,
    private readonly kbId: string,
  ) {}

  /** Catches up with the database; one indexed read when nothing changed. */
  refresh(): void {
    const generation = this.currentGeneration();
    if (generation === this.generation) return;
    const rows = this.db
      .query<DocumentRow, [string]>(
        `SELECT id, metadata, status, first_chunk_rowid, last_chunk_rowid FROM documents
         WHERE kb_id = ? AND first_chunk_rowid IS NOT NULL`,
      )
      .all(this.kbId);
    const documents = new Map<string, DocumentEntry>();
    let maxRowid = 0;
    let readyChunks = 0;
    let allReady = true;
    for (const row of rows) {
      const known = this.documents.get(row.id);
      const metadata = known?.metadataJson === row.metadata ? known.metadata : parseJsonObject(row.metadata);
      const ready = row.status === "ready";
      documents.set(row.id, { metadataJson: row.metadata, metadata, ready, first: row.first_chunk_rowid, last: row.last_chunk_rowid });
      maxRowid = Math.max(maxRowid, row.last_chunk_rowid);
      if (ready) readyChunks += row.last_chunk_rowid - row.first_chunk_rowid + 1;
      else allReady = false;
    }
    Object.assign(this, { documents, maxRowid, readyChunks, allReady, readyMask: null, generation });
  }

  /** Chunks of ready documents that the filter accepts. */
  eligibility(predicate: DocumentPredicate | null): Eligibility {
    if (!predicate) {
      if (this.allReady) return { mask: null, count: this.readyChunks };
      return (this.readyMask ??= this.mask(() => true));
    }
    return this.mask(predicate);
  }

  private mask(accept: DocumentPredicate): Eligibility {
    const mask = new Uint8Array(this.maxRowid + 1);
    let count = 0;
    for (const doc of this.documents.values()) {
      if (!doc.ready || !accept(doc.metadata)) continue;
      mask.fill(1, doc.first, doc.last + 1);
      count += doc.last - doc.first + 1;
    }
    return { mask, count };
  }

  /** Rough heap size, for the index memory budget. */
  get estimatedBytes(): number {
    return this.documents.size * 400 + (this.readyMask?.mask?.byteLength ?? 0);
  }

  private currentGeneration(): number {
    return (
      this.db.query<{ generation: number }, [string]>("SELECT generation FROM search_kb_generations WHERE kb_id = ?").get(this.kbId)
        ?.generation ?? 0
    );
  }
}
