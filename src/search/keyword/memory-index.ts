// BM25 over one knowledge base's chunks, held in memory: term → posting list of (slot, term frequency).
// Statistics (document count, average length, document frequency) are the knowledge base's own, so one
// tenant's documents never shift another's scores. Scoring is term-at-a-time into an accumulator, which
// only touches chunks that contain a query term, so it is exact and needs no candidate cut-off.
import { keywordTerms } from "./tokenize.ts";
import { TopK, type Scored } from "./topk.ts";

/**
 * BM25 term-frequency saturation and length normalization. One setting for every collection, picked on a
 * flat optimum of mean nDCG@10 over the five evaluation collections (bench:quality): 1.5/0.6 gave 0.467,
 * the textbook 1.2/0.75 0.462; chunks are short passages, for which less length normalization suits.
 */
export const BM25_K1 = 1.5;
export const BM25_B = 0.6;

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
    this.tfs[this.length] = Math.min(tf, 0xffff);
    this.length++;
  }
}

export class KeywordIndex {
  private readonly postings = new Map<string, Postings>();
  private lengths = new Uint32Array(1024);
  private chunkCount = 0;
  private totalLength = 0;
  /** Per-search accumulators, kept between searches: scores by slot, and which slots got one. */
  private scratch = new Float64Array(0);
  private touched = new Int32Array(0);
  /** Per slot, BM25's length normalization k1·(1 − b + b·length/average); rebuilt after changes. */
  private norms: Float64Array | null = null;

  /** Indexes a chunk's text under its slot. */
  add(slot: number, text: string): void {
    const terms = keywordTerms(text);
    for (const term of terms) {
      let list = this.postings.get(term);
      if (!list) this.postings.set(term, (list = new Postings()));
      // A term seen before in this chunk was appended last to its list: count it there.
      const last = list.length - 1;
      if (last >= 0 && list.slots[last] === slot) list.tfs[last] = Math.min(list.tfs[last] + 1, 0xffff);
      else list.add(slot, 1);
    }
    if (slot >= this.lengths.length) {
      const lengths = new Uint32Array(Math.max(slot + 1, this.lengths.length * 2));
      lengths.set(this.lengths);
      this.lengths = lengths;
    }
    this.lengths[slot] = terms.length;
    this.chunkCount++;
    this.totalLength += terms.length;
    this.norms = null;
  }

  /** Renumbers slots after chunks were dropped: remap[old] is the new slot, or -1 for a dropped chunk. */
  compact(remap: Int32Array, size: number): void {
    const lengths = new Uint32Array(Math.max(size, 1024));
    this.chunkCount = 0;
    this.totalLength = 0;
    for (let old = 0; old < remap.length; old++) {
      if (remap[old] < 0) continue;
      lengths[remap[old]] = this.lengths[old];
      this.chunkCount++;
      this.totalLength += this.lengths[old];
    }
    this.lengths = lengths;
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

  /**
   * The `limit` best chunks for the query by BM25 (raw score, higher is better). `eligible`, when given,
   * marks the slots that may be returned; statistics still cover the whole knowledge base.
   */
  search(query: string, eligible: Uint8Array | null, limit: number): Scored[] {
    const weights = queryTermWeights(query);
    if (weights.size === 0 || this.chunkCount === 0) return [];
    const n = this.chunkCount;
    const norms = this.lengthNorms();
    if (this.scratch.length < this.lengths.length) {
      this.scratch = new Float64Array(this.lengths.length);
      this.touched = new Int32Array(this.lengths.length);
    }
    const scores = this.scratch;
    const touched = this.touched;
    let touchedCount = 0;
    for (const [term, weight] of weights) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      const termWeight = weight * idf * (BM25_K1 + 1);
      for (let i = 0; i < list.length; i++) {
        const slot = list.slots[i];
        if (eligible && !eligible[slot]) continue;
        const tf = list.tfs[i];
        if (scores[slot] === 0) touched[touchedCount++] = slot;
        scores[slot] += (termWeight * tf) / (tf + norms[slot]);
      }
    }
    const best = new TopK(limit);
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i];
      best.push(slot, scores[slot]);
      scores[slot] = 0;
    }
    return best.sorted();
  }

  private lengthNorms(): Float64Array {
    if (this.norms) return this.norms;
    const averageLength = this.totalLength / this.chunkCount || 1;
    const norms = new Float64Array(this.lengths.length);
    for (let slot = 0; slot < norms.length; slot++) norms[slot] = BM25_K1 * (1 - BM25_B + (BM25_B * this.lengths[slot]) / averageLength);
    return (this.norms = norms);
  }
}

/** Query terms with their weight: a repeated term counts more, with saturation (BM25's k3 = 1). */
function queryTermWeights(query: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of keywordTerms(query)) counts.set(term, (counts.get(term) ?? 0) + 1);
  const weights = new Map<string, number>();
  for (const [term, qtf] of counts) weights.set(term, (2 * qtf) / (1 + qtf));
  return weights;
}
