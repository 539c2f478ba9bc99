// Cosine nearest neighbours over one knowledge base's chunk vectors, held in memory in two compact forms:
// 8-bit codes (vector/int8-codes.ts) and sign bits. Small candidate sets are scored exactly on the codes;
// large ones are first narrowed by Hamming distance on the bits (a 64-byte scan per chunk) to a generous
// shortlist that is then scored on the codes.
import { TopK, type Scored } from "./topk.ts";
import { codeCosine, quantize, queryCodes, type QueryCodes } from "./vector/int8-codes.ts";

/** Up to this many candidates, every candidate is scored on its 8-bit code. */
const EXACT_LIMIT = 4096;
/**
 * Shortlist kept by Hamming distance: the largest of 1,000, 10 × the results asked for and 4 % of the
 * candidates. Measured on real embeddings (npl, 12k chunks), a 4 % shortlist keeps ~97 % of the exact
 * top 10 (1 %: 86 %, 8 %: 99 %).
 */
const SHORTLIST_MIN = 1000;
const SHORTLIST_FACTOR = 10;
const SHORTLIST_FRACTION = 0.04;

const POPCOUNT16 = new Uint8Array(1 << 16);
for (let i = 1; i < POPCOUNT16.length; i++) POPCOUNT16[i] = (i & 1) + POPCOUNT16[i >> 1];

export class VectorIndex {
  private readonly words: number;
  private capacity = 0;
  private bits = new Uint32Array(0);
  private codes = new Int8Array(0);
  private scales = new Float32Array(0);
  private present = new Uint8Array(0);
  private size = 0;

  constructor(readonly dimension: number) {
    this.words = Math.ceil(dimension / 32);
  }

  /** Bytes its arrays take: they grow by doubling from 256 slots, so a one-chunk index holds 256 slots' worth. */
  get allocatedBytes(): number {
    return this.capacity * (this.dimension + this.words * 4 + 5);
  }

  /** Stores the vector of a slot; null (no vector stored) keeps the slot out of vector results. */
  set(slot: number, vector: Float32Array | null): void {
    this.grow(slot + 1);
    this.size = Math.max(this.size, slot + 1);
    if (!vector || vector.length !== this.dimension) {
      this.present[slot] = 0;
      return;
    }
    const bitBase = slot * this.words;
    this.bits.fill(0, bitBase, bitBase + this.words);
    for (let i = 0; i < vector.length; i++) if (vector[i] > 0) this.bits[bitBase + (i >> 5)] |= 1 << (i & 31);
    this.scales[slot] = quantize(vector, this.codes, slot * this.dimension);
    this.present[slot] = 1;
  }

  /** Renumbers slots after chunks were dropped: remap[old] is the new slot, or -1. */
  compact(remap: Int32Array, size: number): void {
    const old = { bits: this.bits, codes: this.codes, scales: this.scales, present: this.present };
    this.capacity = 0;
    this.bits = new Uint32Array(0);
    this.codes = new Int8Array(0);
    this.scales = new Float32Array(0);
    this.present = new Uint8Array(0);
    this.grow(size);
    for (let slot = 0; slot < Math.min(remap.length, this.size); slot++) {
      const to = remap[slot];
      if (to < 0) continue;
      this.bits.set(old.bits.subarray(slot * this.words, (slot + 1) * this.words), to * this.words);
      this.codes.set(old.codes.subarray(slot * this.dimension, (slot + 1) * this.dimension), to * this.dimension);
      this.scales[to] = old.scales[slot];
      this.present[to] = old.present[slot];
    }
    this.size = size;
  }

  /**
   * The `limit` chunks most similar to the (unit-length) query, scored by cosine similarity. `eligible`,
   * when given, marks the slots that may be returned.
   */
  search(query: Float32Array, eligible: Uint8Array | null, limit: number): Scored[] {
    const candidates = this.candidates(eligible);
    const keep = Math.max(SHORTLIST_MIN, SHORTLIST_FACTOR * limit, Math.ceil(SHORTLIST_FRACTION * candidates.length));
    const shortlist = candidates.length <= Math.max(EXACT_LIMIT, keep) ? candidates : this.nearestByBits(query, candidates, keep);
    const best = new TopK(limit);
    const codes = queryCodes(query);
    for (const slot of shortlist) best.push(slot, this.cosine(codes, slot));
    return best.sorted();
  }

  /** Slots that have a vector and are eligible. */
  private candidates(eligible: Uint8Array | null): Int32Array {
    const out = new Int32Array(this.size);
    let n = 0;
    for (let slot = 0; slot < this.size; slot++) {
      if (this.present[slot] === 1 && (eligible === null || eligible[slot] === 1)) out[n++] = slot;
    }
    return out.subarray(0, n);
  }

  private cosine(query: QueryCodes, slot: number): number {
    return codeCosine(query, this.codes, slot * this.dimension, this.scales[slot]);
  }

  /** The candidates with the smallest Hamming distance to the query's sign bits (ties at the edge kept). */
  private nearestByBits(query: Float32Array, candidates: Int32Array, keep: number): Int32Array {
    const queryBits = new Uint32Array(this.words);
    for (let i = 0; i < query.length; i++) if (query[i] > 0) queryBits[i >> 5] |= 1 << (i & 31);
    const distances = new Uint16Array(candidates.length);
    const histogram = new Uint32Array(this.dimension + 1);
    const bits = this.bits;
    for (let c = 0; c < candidates.length; c++) {
      const base = candidates[c] * this.words;
      let distance = 0;
      for (let w = 0; w < this.words; w++) {
        const x = bits[base + w] ^ queryBits[w];
        distance += POPCOUNT16[x & 0xffff] + POPCOUNT16[x >>> 16];
      }
      distances[c] = distance;
      histogram[distance]++;
    }
    let cutoff = 0;
    for (let seen = histogram[0]; seen < keep; seen += histogram[++cutoff]);
    const out = new Int32Array(candidates.length);
    let n = 0;
    for (let c = 0; c < candidates.length; c++) if (distances[c] <= cutoff) out[n++] = candidates[c];
    return out.subarray(0, n);
  }

  private grow(needed: number): void {
    if (needed <= this.capacity) return;
    const capacity = Math.max(needed, this.capacity * 2, 256);
    const bits = new Uint32Array(capacity * this.words);
    bits.set(this.bits);
    const codes = new Int8Array(capacity * this.dimension);
    codes.set(this.codes);
    const scales = new Float32Array(capacity);
    scales.set(this.scales);
    const present = new Uint8Array(capacity);
    present.set(this.present);
    Object.assign(this, { bits, codes, scales, present, capacity });
  }
}
