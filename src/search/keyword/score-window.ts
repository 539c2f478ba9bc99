// The window of scores both keyword strategies (max-score.ts, dense-sum.ts) sum into, in the memory of a
// WebAssembly kernel instance, so that the dense sum can hand whole posting blocks to the kernel
// (kernels.wat sumPostingBlocks) and read the window back with it (takeAbove). Memory, from 0: the
// scores (f64 by slot − low), the window's chunk lengths (u32), the posting blocks being summed, then the
// kernel's work room.
import { bufferOf } from "../byte-copy.ts";
import { Kernels, SUM_WORK_BYTES, writeUnpackTable } from "../kernels/kernels.ts";
import { BLOCK_SIZE } from "./segment-format.ts";
import type { PostingSource } from "./posting-cursor.ts";

/**
 * The most slots a window of scores covers. Each window costs every term one block decoded in
 * JavaScript, the one that straddles its end (posting-cursor.ts sum), while the kernel unpacks the rest
 * fast: at 1M chunks (the evaluation queries' keyword sides, top 100, one shard, 4 interleaved runs)
 * 32,768 slots took 2.06-2.18 ms a query where 16,384 took 2.13-2.32; 65,536 was no faster. Scores and
 * lengths of a window then take 384 KB of the kernel's memory.
 */
export const MAX_WINDOW = 32768;

const LENGTHS_AT = MAX_WINDOW * Float64Array.BYTES_PER_ELEMENT;
const BLOCKS_AT = LENGTHS_AT + MAX_WINDOW * Uint32Array.BYTES_PER_ELEMENT;
/**
 * A term's blocks inside one window hold at most MAX_WINDOW postings, so at most MAX_WINDOW / BLOCK_SIZE
 * blocks of a header word and at most 8 bytes a posting; the kernel reads up to 16 bytes past the last
 * (into the work room after them).
 */
const BLOCKS_ROOM = (MAX_WINDOW / BLOCK_SIZE) * (4 + BLOCK_SIZE * 8);
/** The kernel's work room (kernels.ts SUM_WORK_BYTES). */
const WORK_AT = BLOCKS_AT + BLOCKS_ROOM;

export class ScoreWindowMemory {
  readonly kernels = new Kernels();
  /** Every score is 0 between searches: whoever adds to one resets it. */
  readonly scores: Float64Array;
  /** The dense sum's window (dense-sum.ts): its first slot, the segment's chunk lengths, the BM25 norm. */
  low = 0;
  lengths: Uint32Array = new Uint32Array(0);
  normBase = 0;
  normPerTerm = 0;

  constructor() {
    this.kernels.reserve(WORK_AT + SUM_WORK_BYTES);
    writeUnpackTable(this.kernels, WORK_AT);
    this.scores = new Float64Array(this.kernels.bytes.buffer, 0, MAX_WINDOW);
  }

  /** Moves the dense sum's window to the slots [low, high), copying their chunks' lengths in for sumBlocks. */
  moveWindow(low: number, high: number): void {
    this.low = low;
    bufferOf(this.lengths).copy(this.kernels.bytes, LENGTHS_AT, low * Uint32Array.BYTES_PER_ELEMENT, high * Uint32Array.BYTES_PER_ELEMENT);
  }

  /**
   * Adds the contributions of a term's blocks [first, last], all inside the window, to the scores:
   * `lastCount` postings in the last (BLOCK_SIZE in the others), the first's gaps counting from
   * `slotBefore`. Their bytes are copied in (a term's blocks are consecutive in the file).
   */
  sumBlocks(source: PostingSource, first: number, last: number, lastCount: number, slotBefore: number, factor: number): void {
    const words = source.postingWords;
    const from = source.blockOffset[first];
    const to = last + 1 < source.blockOffset.length ? source.blockOffset[last + 1] : words.byteLength;
    bufferOf(words).copy(this.kernels.bytes, BLOCKS_AT, from, to);
    this.kernels.sumPostingBlocks(BLOCKS_AT, last - first + 1, lastCount, slotBefore, this.low, LENGTHS_AT, factor, this.normBase, this.normPerTerm, WORK_AT);
  }
}

let memory: ScoreWindowMemory | null = null;

/** This thread's window of scores, made at its first keyword search. */
export function scoreWindowMemory(): ScoreWindowMemory {
  return (memory ??= new ScoreWindowMemory());
}
