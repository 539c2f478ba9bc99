// The vectors of a knowledge base's delta (chunks written since its segment), keyed by chunk rowid over
// the in-memory VectorIndex's dense slots. Removed chunks leave an empty slot; the delta is short-lived
// (replaced whenever a new segment is published), so slots are never reused.
import { VectorIndex } from "./vector-index.ts";
import type { RowidHit } from "./rowid-hit.ts";

export class DeltaVectors {
  private readonly index: VectorIndex;
  private readonly slotOf = new Map<number, number>();
  private readonly rowidOf: number[] = [];

  constructor(readonly dimension: number) {
    this.index = new VectorIndex(dimension);
  }

  get size(): number {
    return this.slotOf.size;
  }

  add(rowid: number, vector: Float32Array | null): void {
    this.remove(rowid);
    const slot = this.rowidOf.length;
    this.rowidOf.push(rowid);
    this.slotOf.set(rowid, slot);
    this.index.set(slot, vector);
  }

  remove(rowid: number): void {
    const slot = this.slotOf.get(rowid);
    if (slot === undefined) return;
    this.index.set(slot, null);
    this.slotOf.delete(rowid);
  }

  /** Exact cosine top `limit` among the delta's chunks that `eligible` (by rowid) accepts. */
  search(query: Float32Array, eligible: Uint8Array | null, limit: number): RowidHit[] {
    if (this.slotOf.size === 0) return [];
    let bySlot: Uint8Array | null = null;
    if (eligible) {
      bySlot = new Uint8Array(this.rowidOf.length);
      for (let slot = 0; slot < bySlot.length; slot++) bySlot[slot] = eligible[this.rowidOf[slot]] ?? 0;
    }
    return this.index.search(query, bySlot, limit).map((hit) => ({ rowid: this.rowidOf[hit.id], score: hit.score }));
  }

  /**
   * The index's arrays as allocated (at 512-d, 256 slots are ~149 KB: counting the rows alone made a
   * one-chunk knowledge base ~1 KB, and a 32 MB budget held thousands of them), plus the slot maps.
   */
  get estimatedBytes(): number {
    return this.index.allocatedBytes + this.rowidOf.length * (64 + 40);
  }
}
