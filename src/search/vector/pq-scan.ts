// One query's product-quantized scores (vector/pq.ts) computed by the WebAssembly kernel on codes in the
// blocked layout (pq-blocks.ts), 16 at a time: a range is queued as the whole blocks it overlaps, a single
// code is copied into the next lane. The queued positions are kept as runs (first lane, first position,
// length) rather than one index per lane, and a flush reads back only the lanes whose score beats the
// weakest candidate held (kernels.wat firstAboveF32): at 1M chunks, a search visiting 100k codes spent
// 0.6 of its 1.9 ms writing and reading an index for every lane.
import { BATCH, KernelScan } from "./kernel-scan.ts";
import { copyBlockedCode, PQ_BLOCK } from "./pq-blocks.ts";
import { PQ_CENTROIDS } from "./pq.ts";
import type { TopK } from "../topk.ts";

/** Runs of the queued batch (shared like the kernel's memory: one scan per thread at a time). */
const runLanes = new Int32Array(BATCH);
const runPositions = new Int32Array(BATCH);
const runLengths = new Int32Array(BATCH);

export class PqScan extends KernelScan {
  private readonly blockBytes: number;
  private runs = 0;

  /**
   * `table`: the query's ProductQuantizer.lookupTable; `codes`: blocked, `codeBytes` bytes a code (even),
   * by list position; `slots`: the slot pushed into `best` for each position.
   */
  constructor(
    table: Uint8Array,
    codes: Uint8Array,
    codeBytes: number,
    private readonly slots: Int32Array,
    private readonly best: TopK,
    /** Offers only the positions whose rowid (`rowids`, by position) the mask marks; null: every one. */
    private readonly eligible: { mask: Uint8Array; rowids: Int32Array } | null = null,
  ) {
    super(codes, codeBytes, table.byteLength);
    if (table.length !== 2 * codeBytes * PQ_CENTROIDS) throw new Error(`A table of ${table.length} values does not fit codes of ${codeBytes} bytes`);
    this.blockBytes = PQ_BLOCK * codeBytes;
    this.kernels.bytes.set(table);
  }

  /** Queues the codes of positions [from, to). */
  override addRange(from: number, to: number): void {
    if (from >= to) return;
    const { kernels, blockBytes } = this;
    this.pending = Math.ceil(this.pending / PQ_BLOCK) * PQ_BLOCK;
    let block = Math.floor(from / PQ_BLOCK);
    const endBlock = Math.ceil(to / PQ_BLOCK);
    while (block < endBlock) {
      if (this.pending === BATCH) this.flush();
      const blocks = Math.min(endBlock - block, (BATCH - this.pending) / PQ_BLOCK);
      this.source.copy(kernels.bytes, this.codesAt + (this.pending / PQ_BLOCK) * blockBytes, block * blockBytes, (block + blocks) * blockBytes);
      const first = Math.max(from, block * PQ_BLOCK);
      this.addRun(this.pending + first - block * PQ_BLOCK, first, Math.min(to, (block + blocks) * PQ_BLOCK) - first);
      this.pending += blocks * PQ_BLOCK;
      block += blocks;
    }
  }

  /** Queues the code of position `index`. */
  override add(index: number): void {
    if (this.pending === BATCH) this.flush();
    copyBlockedCode(this.source, index, this.kernels.bytes, this.pending, this.codeBytes, this.codesAt);
    const last = this.runs - 1;
    // Consecutive positions (a document's chunks that a filter keeps) extend the run before them.
    if (last >= 0 && runLanes[last] + runLengths[last] === this.pending && runPositions[last] + runLengths[last] === index) runLengths[last]++;
    else this.addRun(this.pending, index, 1);
    this.pending++;
  }

  /** Scores the queued codes and offers those that beat the weakest held to `best`. */
  flush(): void {
    const { kernels, pending, best, slots, eligible } = this;
    if (pending === 0) return;
    kernels.pqBlockScores(this.codesAt, Math.ceil(pending / PQ_BLOCK), this.codeBytes, 0, this.scoresAt);
    const scores = kernels.floats;
    for (let run = 0; run < this.runs; run++) {
      const start = this.scoresAt + 4 * runLanes[run];
      const end = start + 4 * runLengths[run];
      // Lane at byte `at` holds position runPositions[run] + (at - start) / 4.
      const positionBase = runPositions[run] - start / 4;
      for (let at = kernels.firstAboveF32(start, end, best.threshold); at < end; at = kernels.firstAboveF32(at + 4, end, best.threshold)) {
        const position = positionBase + at / 4;
        if (eligible === null || eligible.mask[eligible.rowids[position]] === 1) best.push(slots[position], scores[at / 4]);
      }
    }
    this.runs = 0;
    this.pending = 0;
  }

  private addRun(lane: number, position: number, length: number): void {
    runLanes[this.runs] = lane;
    runPositions[this.runs] = position;
    runLengths[this.runs] = length;
    this.runs++;
  }
}
