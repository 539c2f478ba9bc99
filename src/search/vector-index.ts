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

/**
 * Codes and sign bits are kept in blocks of this many slots (at 512-d, 2 MB of codes): the index grows by
 * a block, never by copying what it holds. Grown by doubling one array, taking a 200,000-chunk backlog in
 * after a start stalled the HTTP thread for 41-48 ms at 65,537 and 131,073 chunks (copies of 32 and 64 MB).
 */
const BLOCK_SHIFT = 12;
const BLOCK_SLOTS = 1 << BLOCK_SHIFT;
const IN_BLOCK = BLOCK_SLOTS - 1;

export class VectorIndex {
  private readonly words: number;
  private capacity = 0;
  private bitBlocks: Uint32Array[] = [];
  private codeBlocks: Int8Array[] = [];
  private scales = new Float32Array(0);
  private present = new Uint8Array(0);
  private size = 0;

  constructor(readonly dimension: number) {
    this.words = Math.ceil(dimension / 32);
  }

  /**
   * Bytes its arrays take: a small index holds what it has (the first block grows by doubling from 256
   * slots, so a one-chunk index holds 256 slots' worth), a large one whole blocks.
   */
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
    const bits = this.bitBlocks[slot >> BLOCK_SHIFT]!;
    const bitBase = (slot & IN_BLOCK) * this.words;
    bits.fill(0, bitBase, bitBase + this.words);
    for (let i = 0; i < vector.length; i++) if (vector[i] > 0) bits[bitBase + (i >> 5)] |= 1 << (i & 31);
    this.scales[slot] = quantize(vector, this.codeBlocks[slot >> BLOCK_SHIFT]!, (slot & IN_BLOCK) * this.dimension);
    this.present[slot] = 1;
  }

  /** Renumbers slots after chunks were dropped: remap[old] is the new slot, or -1. */
  compact(remap: Int32Array, size: number): void {
    const old = { bitBlocks: this.bitBlocks, codeBlocks: this.codeBlocks, scales: this.scales, present: this.present };
    this.capacity = 0;
    this.bitBlocks = [];
    this.codeBlocks = [];
    this.scales = new Float32Array(0);
    this.present = new Uint8Array(0);
    this.grow(size);
    for (let slot = 0; slot < Math.min(remap.length, this.size); slot++) {
      const to = remap[slot];
      if (to < 0) continue;
      const from = slot & IN_BLOCK;
      const at = to & IN_BLOCK;
      const oldBits = old.bitBlocks[slot >> BLOCK_SHIFT]!;
      const oldCodes = old.codeBlocks[slot >> BLOCK_SHIFT]!;
      this.bitBlocks[to >> BLOCK_SHIFT]!.set(oldBits.subarray(from * this.words, (from + 1) * this.words), at * this.words);
      this.codeBlocks[to >> BLOCK_SHIFT]!.set(oldCodes.subarray(from * this.dimension, (from + 1) * this.dimension), at * this.dimension);
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
    return codeCosine(query, this.codeBlocks[slot >> BLOCK_SHIFT]!, (slot & IN_BLOCK) * this.dimension, this.scales[slot]);
  }

  /** The candidates with the smallest Hamming distance to the query's sign bits (ties at the edge kept). */
  private nearestByBits(query: Float32Array, candidates: Int32Array, keep: number): Int32Array {
    const queryBits = new Uint32Array(this.words);
    for (let i = 0; i < query.length; i++) if (query[i] > 0) queryBits[i >> 5] |= 1 << (i & 31);
    const distances = new Uint16Array(candidates.length);
    const histogram = new Uint32Array(this.dimension + 1);
    for (let c = 0; c < candidates.length; c++) {
      const bits = this.bitBlocks[candidates[c] >> BLOCK_SHIFT]!;
      const base = (candidates[c] & IN_BLOCK) * this.words;
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

  /**
   * Room for `needed` slots: the first block doubles from 256 slots up to BLOCK_SLOTS (so that thousands of
   * one-chunk knowledge bases stay small), then whole blocks are added. Scales and flags (5 bytes a slot)
   * are copied as they grow, a block at a time: 1 MB at 200,000 slots.
   */
  private grow(needed: number): void {
    if (needed <= this.capacity) return;
    const capacity =
      needed <= BLOCK_SLOTS ? Math.min(BLOCK_SLOTS, Math.max(needed, this.capacity * 2, 256)) : Math.ceil(needed / BLOCK_SLOTS) * BLOCK_SLOTS;
    for (let block = 0; block * BLOCK_SLOTS < capacity; block++) {
      const slots = Math.min(BLOCK_SLOTS, capacity - block * BLOCK_SLOTS);
      const bits = this.bitBlocks[block];
      if (bits && bits.length === slots * this.words) continue;
      const [grownBits, grownCodes] = [new Uint32Array(slots * this.words), new Int8Array(slots * this.dimension)];
      if (bits) grownBits.set(bits);
      if (this.codeBlocks[block]) grownCodes.set(this.codeBlocks[block]!);
      this.bitBlocks[block] = grownBits;
      this.codeBlocks[block] = grownCodes;
    }
    const scales = new Float32Array(capacity);
    scales.set(this.scales);
    const present = new Uint8Array(capacity);
    present.set(this.present);
    Object.assign(this, { scales, present, capacity });
  }
}
