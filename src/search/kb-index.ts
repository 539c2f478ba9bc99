// One knowledge base's search index in memory: its ready documents (name, metadata, version) and their
// chunks, each chunk at a dense "slot"; the keyword and vector sides are built on first use. refresh()
// brings it up to date with the database in one read transaction, reloading only documents whose version
// changed (store/migrations/020_search_versions.ts); dropping chunks renumbers the slots.
//
// Slots are only meaningful until the next refresh: callers turn them into chunk rowids before awaiting.
import type { Db } from "../store/db.ts";
import { parseJsonObject } from "../store/json.ts";
import { KeywordIndex } from "./keyword-index.ts";
import { VectorIndex } from "./vector-index.ts";
import { readPartition, readVector } from "./vector-source.ts";
import type { DocumentPredicate } from "./filters.ts";
import type { Scored } from "./topk.ts";

interface DocumentEntry {
  id: string;
  metadataJson: string;
  metadata: Record<string, unknown>;
  version: number;
  firstSlot: number;
  slotCount: number;
}

interface ReadyDocumentRow {
  id: string;
  metadata: string;
  version: number;
}

export interface Eligibility {
  /** 1 for each slot a search may return; null when every chunk may be returned. */
  mask: Uint8Array | null;
  /** Chunks the search considers (spec: chunks_searched). */
  count: number;
}

export interface RowidHit {
  rowid: number;
  score: number;
}

export class KbIndex {
  private generation = -1;
  private documents = new Map<string, DocumentEntry>();
  private rowids: number[] = [];
  private keyword: KeywordIndex | null = null;
  private vectors: VectorIndex | null = null;
  lastUsed = performance.now();

  constructor(
    private readonly db: Db,
    readonly kbId: string,
    private readonly dimension: number,
  ) {}

  get chunkCount(): number {
    return this.rowids.length;
  }

  /** Catches up with the database; cheap (one indexed read) when nothing changed. */
  refresh(): void {
    this.lastUsed = performance.now();
    if (this.currentGeneration() === this.generation) return;
    this.db.transaction(() => {
      const generation = this.currentGeneration();
      const rows = this.db
        .query<ReadyDocumentRow, [string]>(
          `SELECT d.id, d.metadata, COALESCE(v.version, 0) AS version FROM documents d
           LEFT JOIN search_doc_versions v ON v.document_id = d.id WHERE d.kb_id = ? AND d.status = 'ready'`,
        )
        .all(this.kbId);
      const ready = new Map(rows.map((row) => [row.id, row]));
      const stale = [...this.documents.values()].filter((doc) => ready.get(doc.id)?.version !== doc.version);
      if (stale.length > 0) this.drop(stale);
      for (const row of rows) {
        const doc = this.documents.get(row.id);
        if (!doc) this.load(row);
        else if (doc.metadataJson !== row.metadata) Object.assign(doc, { metadataJson: row.metadata, metadata: parseJsonObject(row.metadata) });
      }
      this.generation = generation;
    })();
  }

  /** Which chunks a search may return: all of them, or those of documents the filter accepts. */
  eligibility(predicate: DocumentPredicate | null): Eligibility {
    if (!predicate) return { mask: null, count: this.rowids.length };
    const mask = new Uint8Array(this.rowids.length);
    let count = 0;
    for (const doc of this.documents.values()) {
      if (!predicate(doc.metadata)) continue;
      mask.fill(1, doc.firstSlot, doc.firstSlot + doc.slotCount);
      count += doc.slotCount;
    }
    return { mask, count };
  }

  keywordSearch(query: string, eligible: Uint8Array | null, limit: number): RowidHit[] {
    return this.toRowids(this.keywordIndex().search(query, eligible, limit));
  }

  vectorSearch(query: Float32Array, eligible: Uint8Array | null, limit: number): RowidHit[] {
    return this.toRowids(this.vectorIndex().search(query, eligible, limit));
  }

  private toRowids(hits: Scored[]): RowidHit[] {
    return hits.map((hit) => ({ rowid: this.rowids[hit.id], score: hit.score }));
  }

  private currentGeneration(): number {
    return (
      this.db.query<{ generation: number }, [string]>("SELECT generation FROM search_kb_generations WHERE kb_id = ?").get(this.kbId)
        ?.generation ?? 0
    );
  }

  /** Appends a ready document's chunks (and, for built sides, their text and vectors) as new slots. */
  private load(row: ReadyDocumentRow): void {
    const chunks = this.db
      .query<{ rowid: number; text: string }, [string]>("SELECT rowid, text FROM chunks WHERE document_id = ? ORDER BY chunk_index")
      .all(row.id);
    const firstSlot = this.rowids.length;
    for (const chunk of chunks) {
      const slot = this.rowids.length;
      this.rowids.push(chunk.rowid);
      this.keyword?.add(slot, chunk.text);
      this.vectors?.set(slot, readVector(this.db, chunk.rowid, this.dimension));
    }
    this.documents.set(row.id, {
      id: row.id,
      metadataJson: row.metadata,
      metadata: parseJsonObject(row.metadata),
      version: row.version,
      firstSlot,
      slotCount: chunks.length,
    });
  }

  /** Removes documents' chunks and renumbers the remaining slots densely, keeping their order. */
  private drop(docs: DocumentEntry[]): void {
    const remap = new Int32Array(this.rowids.length);
    for (const doc of docs) {
      remap.fill(-1, doc.firstSlot, doc.firstSlot + doc.slotCount);
      this.documents.delete(doc.id);
    }
    const rowids: number[] = [];
    for (let slot = 0; slot < remap.length; slot++) {
      if (remap[slot] < 0) continue;
      remap[slot] = rowids.length;
      rowids.push(this.rowids[slot]);
    }
    for (const doc of this.documents.values()) doc.firstSlot = remap[doc.firstSlot];
    this.rowids = rowids;
    this.keyword?.compact(remap, rowids.length);
    this.vectors?.compact(remap, rowids.length);
  }

  private keywordIndex(): KeywordIndex {
    if (this.keyword) return this.keyword;
    const keyword = new KeywordIndex();
    const slotOf = new Map(this.rowids.map((rowid, slot) => [rowid, slot]));
    const texts = this.db.query<{ rowid: number; text: string }, [string]>("SELECT rowid, text FROM chunks WHERE kb_id = ? ORDER BY rowid");
    const bySlot: string[] = new Array(this.rowids.length);
    for (const chunk of texts.iterate(this.kbId)) {
      const slot = slotOf.get(chunk.rowid);
      if (slot !== undefined) bySlot[slot] = chunk.text;
    }
    for (let slot = 0; slot < bySlot.length; slot++) keyword.add(slot, bySlot[slot] ?? "");
    return (this.keyword = keyword);
  }

  private vectorIndex(): VectorIndex {
    if (this.vectors) return this.vectors;
    const vectors = new VectorIndex(this.dimension);
    const slotOf = new Map(this.rowids.map((rowid, slot) => [rowid, slot]));
    const bulk = readPartition(this.db, this.kbId, this.dimension, (rowid) => slotOf.has(rowid), (rowid, vector) =>
      vectors.set(slotOf.get(rowid)!, vector),
    );
    if (!bulk) this.rowids.forEach((rowid, slot) => vectors.set(slot, readVector(this.db, rowid, this.dimension)));
    return (this.vectors = vectors);
  }
}
