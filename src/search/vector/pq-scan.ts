// One query's product-quantized scores (vector/pq.ts) computed by the WebAssembly kernel on codes in the
// blocked layout (pq-blocks.ts), 16 at a time: a range is queued as the whole blocks it overlaps, its
// lanes outside the range marked unused; a single code is copied into the next lane.
import { BATCH, KernelScan } from "./kernel-scan.ts";
import { copyBlockedCode, PQ_BLOCK } from "./pq-blocks.ts";
import { PQ_CENTROIDS } from "./pq.ts";
import type { TopK } from "../topk.ts";

/** The queued index of a lane that holds no code to offer. */
const UNUSED = -1;

export class PqScan extends KernelScan {
  private readonly blockBytes: number;

  /**
   * `table`: the query's ProductQuantizer.lookupTable; `codes`: blocked, `parts` bytes a code, by list
   * position; `slots`: the slot pushed into `best` for each position.
   */
  constructor(
    table: Uint8Array,
    codes: Uint8Array,
    private readonly parts: number,
    private readonly slots: Int32Array,
    private readonly best: TopK,
  ) {
    super(codes, parts, table.byteLength);
    if (table.length !== parts * PQ_CENTROIDS) throw new Error(`A table of ${table.length} values does not fit codes of ${parts} parts`);
    this.blockBytes = PQ_BLOCK * parts;
    this.kernels.bytes.set(table);
  }

  /** Queues the codes of positions [from, to). */
  override addRange(from: number, to: number): void {
    if (from >= to) return;
    const { kernels, indexes, blockBytes } = this;
    while (this.pending % PQ_BLOCK !== 0) indexes[this.pending++] = UNUSED;
    let block = Math.floor(from / PQ_BLOCK);
    const endBlock = Math.ceil(to / PQ_BLOCK);
    while (block < endBlock) {
      if (this.pending === BATCH) this.flush();
      const blocks = Math.min(endBlock - block, (BATCH - this.pending) / PQ_BLOCK);
      kernels.bytes.set(this.source.subarray(block * blockBytes, (block + blocks) * blockBytes), this.codesAt + (this.pending / PQ_BLOCK) * blockBytes);
      for (let position = block * PQ_BLOCK, end = position + blocks * PQ_BLOCK; position < end; position++) {
        indexes[this.pending++] = position >= from && position < to ? position : UNUSED;
      }
      block += blocks;
    }
  }

  /** Queues the code of position `index`. */
  override add(index: number): void {
    if (this.pending === BATCH) this.flush();
    copyBlockedCode(this.source, index, this.kernels.bytes, this.pending, this.parts, this.codesAt);
    this.indexes[this.pending++] = index;
  }

  /** Scores the queued codes and offers them to `best`. */
  flush(): void {
    const { kernels, pending, best, slots, indexes } = this;
    if (pending === 0) return;
    kernels.pqBlockScores(this.codesAt, Math.ceil(pending / PQ_BLOCK), this.parts, 0, this.scoresAt);
    const scores = kernels.floats;
    const first = this.scoresAt / Float32Array.BYTES_PER_ELEMENT;
    let threshold = best.threshold;
    for (let i = 0; i < pending; i++) {
      const score = scores[first + i];
      if (score > threshold && indexes[i] !== UNUSED) {
        best.push(slots[indexes[i]], score);
        threshold = best.threshold;
      }
    }
    this.pending = 0;
  }
}
