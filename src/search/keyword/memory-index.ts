// BM25 over chunks held in memory, addressed by rowid: a knowledge base's keyword delta (the chunks that
// became ready after its segment was built). Postings are term → (slot, term frequency) with dense slots
// in insertion order. Statistics come from the caller, so the delta scores exactly like the segment it
// complements (keyword/segment.ts). Removals are batched: slots are renumbered once, before the next
// read, so dropping a large document costs one pass. Scoring is term-at-a-time into an accumulator, which
// only touches chunks that contain a query term, so it is exact and needs no candidate cut-off.
import { keywordTerms } from "../tokenize.ts";
import { TopK } from "../topk.ts";
import { lengthNorm, termWeight, type KeywordHit, type KeywordStats } from "./bm25.ts";
import { MAX_TF } from "./segment-format.ts";

class Postings {
  slots = new Int32Array(4);
  tfs = new Uint16Array(4);
  length = 0;

  add(slot: number, tf: number): void {
    if (this.length === this.slots.length) {
      const slots = new Int32Array(this.length * 2);
      slots.set(this.slots);
      this.slots = slots;
      const tfs = new Uint16Array(this.length * 2);
      tfs.set(this.tfs);
      this.tfs = tfs;
    }
    this.slots[this.length] = slot;
    this.tfs[this.length] = Math.min(tf, MAX_TF);
    this.length++;
  }
}

export class KeywordIndex implements KeywordStats {
  private readonly postings = new Map<string, Postings>();
  /** Per slot: the chunk's rowid (−1 once removed) and its BM25 length. */
  private rowids = new Int32Array(1024);
  private lengths = new Uint32Array(1024);
  private slotCount = 0;
  private readonly slotOf = new Map<number, number>();
  private removed = 0;
  private termTotal = 0;
  /** Per-search accumulators, kept between searches: scores by slot, and which slots got one. */
  private scratch = new Float64Array(0);
  private touched = new Int32Array(0);
  /** Per slot, BM25's length normalization for `normsAverage`; rebuilt after changes. */
  private norms: Float64Array | null = null;
  private normsAverage = 0;

  get chunkCount(): number {
    return this.slotOf.size;
  }

  /** Terms over all chunks (BM25 lengths summed). */
  get totalLength(): number {
    return this.termTotal;
  }

  get averageLength(): number {
    return this.termTotal / this.chunkCount || 1;
  }

  documentFrequency(term: string): number {
    this.compact();
    return this.postings.get(term)?.length ?? 0;
  }

  /** Indexes a chunk's text under its rowid. */
  add(rowid: number, text: string): void {
    if (this.slotOf.has(rowid)) throw new Error(`chunk ${rowid} is already in the keyword index`);
    const slot = this.slotCount++;
    const terms = keywordTerms(text);
    for (const term of terms) {
      let list = this.postings.get(term);
      if (!list) this.postings.set(term, (list = new Postings()));
      // A term seen before in this chunk was appended last to its list: count it there.
      const last = list.length - 1;
      if (last >= 0 && list.slots[last] === slot) list.tfs[last] = Math.min(list.tfs[last] + 1, MAX_TF);
      else list.add(slot, 1);
    }
    if (slot >= this.lengths.length) {
      const size = this.lengths.length * 2;
      this.lengths = grow(this.lengths, new Uint32Array(size));
      this.rowids = grow(this.rowids, new Int32Array(size));
    }
    this.lengths[slot] = terms.length;
    this.rowids[slot] = rowid;
    this.slotOf.set(rowid, slot);
    this.termTotal += terms.length;
    this.norms = null;
  }

  /** Drops a chunk (slots are renumbered at the next read, not per removal); an unknown rowid is ignored. */
  remove(rowid: number): void {
    const slot = this.slotOf.get(rowid);
    if (slot === undefined) return;
    this.slotOf.delete(rowid);
    this.rowids[slot] = -1;
    this.termTotal -= this.lengths[slot];
    this.removed++;
  }

  /**
   * The `limit` best chunks by BM25 for weighted query terms (queryTermWeights) under the caller's
   * statistics; `eligible`, indexed by rowid, marks the chunks that may be returned.
   */
  search(weights: Map<string, number>, stats: KeywordStats, eligible: Uint8Array | null, limit: number): KeywordHit[] {
    this.compact();
    if (weights.size === 0 || this.slotCount === 0) return [];
    const norms = this.lengthNorms(stats.averageLength);
    if (this.scratch.length < this.slotCount) {
      this.scratch = new Float64Array(this.lengths.length);
      this.touched = new Int32Array(this.lengths.length);
    }
    const { scratch: scores, touched, rowids } = this;
    let touchedCount = 0;
    for (const [term, weight] of weights) {
      const list = this.postings.get(term);
      if (!list) continue;
      const factor = termWeight(weight, stats, term);
      for (let i = 0; i < list.length; i++) {
        const slot = list.slots[i];
        if (eligible && !eligible[rowids[slot]]) continue;
        const tf = list.tfs[i];
        if (scores[slot] === 0) touched[touchedCount++] = slot;
        scores[slot] += (factor * tf) / (tf + norms[slot]);
      }
    }
    const best = new TopK(limit);
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i];
      best.push(rowids[slot], scores[slot]);
      scores[slot] = 0;
    }
    return best.sorted().map((hit) => ({ rowid: hit.id, score: hit.score }));
  }

  /** Renumbers the slots densely without the removed chunks, keeping their order. */
  private compact(): void {
    if (this.removed === 0) return;
    const remap = new Int32Array(this.slotCount);
    let next = 0;
    for (let slot = 0; slot < this.slotCount; slot++) {
      if (this.rowids[slot] < 0) {
        remap[slot] = -1;
        continue;
      }
      remap[slot] = next;
      this.rowids[next] = this.rowids[slot];
      this.lengths[next] = this.lengths[slot];
      this.slotOf.set(this.rowids[next], next);
      next++;
    }
    this.slotCount = next;
    this.removed = 0;
    this.norms = null;
    for (const [term, list] of this.postings) {
      let kept = 0;
      for (let i = 0; i < list.length; i++) {
        const slot = remap[list.slots[i]];
        if (slot < 0) continue;
        list.slots[kept] = slot;
        list.tfs[kept] = list.tfs[i];
        kept++;
      }
      if (kept === 0) this.postings.delete(term);
      else list.length = kept;
    }
  }

  private lengthNorms(averageLength: number): Float64Array {
    if (this.norms && this.normsAverage === averageLength) return this.norms;
    const norms = new Float64Array(this.slotCount);
    for (let slot = 0; slot < norms.length; slot++) norms[slot] = lengthNorm(this.lengths[slot], averageLength);
    this.normsAverage = averageLength;
    return (this.norms = norms);
  }
}

function grow<T extends Uint32Array | Int32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
