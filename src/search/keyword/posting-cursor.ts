// Walks one term's postings in a mapped segment block by block, decoding a block only when it is needed:
// `advance` skips whole blocks by their last slot, so a term consulted for a few candidates costs a few
// block decodes rather than its whole list.
import { BLOCK_SIZE } from "./segment-format.ts";
import type { ScoreWindowMemory } from "./score-window.ts";

/** The mapped arrays of a segment that cursors read. */
export interface PostingSource {
  /**
   * The postings section as little-endian words (blocks start on word boundaries), signed: the shifts in
   * unpack() read the same bits either way, and a Uint32Array's words of 2^31 and more are no 32-bit integers
   * to the JIT (a speculation failure, then code for doubles).
   */
  postingWords: Int32Array;
  termBlocks: Uint32Array;
  termDf: Uint32Array;
  blockLast: Uint32Array;
  blockOffset: Uint32Array;
}

export const EXHAUSTED = 0x7fff_ffff;

/**
 * Where accumulate() sums a window of slots [low, …): scores[slot − low], norm = normBase + normPerTerm ·
 * lengths[slot]. With `eligible` (by rowid; `rowids` by slot), ineligible chunks' postings are skipped:
 * under a filter that leaves few chunks, most postings cost a check instead of a score.
 */
export interface ScoreWindow {
  low: number;
  lengths: Uint32Array;
  normBase: number;
  normPerTerm: number;
  scores: Float64Array;
  eligible: Uint8Array | null;
  rowids: Uint32Array;
}

/**
 * The value of `mask`'s width at bit `bit` of words[at], read without branches from the two words it may
 * straddle (the section ends with padding words, so the second always exists). `<< (31 − bit) << 1`
 * shifts by 32 − bit, which is 0 (not 32) when bit is 0.
 */
function unpack(words: Int32Array, at: number, bit: number, mask: number): number {
  return ((words[at] >>> bit) | ((words[at + 1] << (31 - bit)) << 1)) & mask;
}

export class PostingCursor {
  /** The current posting's slot, or EXHAUSTED. */
  slot = -1;
  tf = 0;
  private readonly slots = new Int32Array(BLOCK_SIZE);
  private readonly tfs = new Int32Array(BLOCK_SIZE);
  private block: number;
  private readonly firstBlock: number;
  private readonly endBlock: number;
  /** Postings in the term's last block (the others hold BLOCK_SIZE). */
  private readonly lastBlockCount: number;
  private count = 0;
  private position = 0;

  constructor(
    private readonly source: PostingSource,
    term: number,
  ) {
    this.firstBlock = source.termBlocks[term];
    this.endBlock = source.termBlocks[term + 1];
    this.block = this.firstBlock - 1;
    this.lastBlockCount = source.termDf[term] - (this.endBlock - this.firstBlock - 1) * BLOCK_SIZE;
    this.nextBlock();
  }

  /**
   * Adds factor · tf / (tf + norm) for each posting before slot `high` into the window's scores, noting
   * newly touched offsets in `touched`; returns the new touched count (MaxScore, max-score.ts).
   */
  accumulate(high: number, factor: number, window: ScoreWindow, touched: Int32Array, touchedCount: number): number {
    const { low, lengths, normBase, normPerTerm, scores, eligible, rowids } = window;
    while (this.slot < high) {
      const { slots, tfs, count } = this;
      let position = this.position;
      for (; position < count; position++) {
        const slot = slots[position];
        if (slot >= high) break;
        if (eligible !== null && eligible[rowids[slot]] !== 1) continue;
        const tf = tfs[position];
        const i = slot - low;
        if (scores[i] === 0) touched[touchedCount++] = i;
        scores[i] += (factor * tf) / (tf + (normBase + normPerTerm * lengths[slot]));
      }
      if (this.stopAt(position, count)) break;
      this.nextBlock();
    }
    return touchedCount;
  }

  /**
   * Adds factor · tf / (tf + norm) for each posting before slot `high` into the window's scores, every
   * chunk's (the dense sum, dense-sum.ts). The rest of the current block is added here; the blocks that
   * end before `high` go to the kernel undecoded (1M chunks, the evaluation queries' top 100 on both
   * shards: 4.6 -> 3.4 ms a query, where JavaScript decoded and summed them). Its loop is accumulate's
   * without the filter and the touched offsets, which a shared loop would test at every posting. (The
   * kernel also taking the blocks `high` falls in was no faster, 3.36 ms: an exit from its summing loop
   * made that loop twice as slow, so it counted the postings before `high` in a loop of its own.)
   */
  sum(high: number, factor: number, window: ScoreWindowMemory): void {
    const { low, lengths, normBase, normPerTerm, scores } = window;
    while (this.slot < high) {
      const { slots, tfs, count } = this;
      let position = this.position;
      for (; position < count; position++) {
        const slot = slots[position];
        if (slot >= high) break;
        const tf = tfs[position];
        scores[slot - low] += (factor * tf) / (tf + (normBase + normPerTerm * lengths[slot]));
      }
      if (this.stopAt(position, count)) break;
      const blockLast = this.source.blockLast;
      let last = this.block;
      while (last + 1 < this.endBlock && blockLast[last + 1] < high) last++;
      if (last > this.block) {
        window.sumBlocks(this.source, this.block + 1, last, this.blockCount(last), blockLast[this.block], factor);
        this.block = last;
      }
      this.nextBlock();
    }
  }

  /** Whether the block's posting at `position` is the first not yet added; if so, the cursor moves to it. */
  private stopAt(position: number, count: number): boolean {
    if (position === count) return false;
    this.position = position;
    this.slot = this.slots[position];
    this.tf = this.tfs[position];
    return true;
  }

  /** Moves to the first posting whose slot is ≥ target (no move when already there). */
  advance(target: number): void {
    if (this.slot >= target) return;
    const { source: { blockLast }, endBlock } = this;
    if (blockLast[this.block] < target) {
      let block = this.block + 1;
      while (block < endBlock && blockLast[block] < target) block++;
      // Exhausted through moveTo: a branch of its own here calling exhaust() was compiled as an exit (see
      // moveTo) that sent the rest of the search to unoptimized code (19 of 1,377 keyword sides, 8 clients).
      this.moveTo(block);
      if (this.slot >= target) return;
    }
    const slots = this.slots;
    let position = this.position;
    while (slots[position] < target) position++;
    this.position = position;
    this.slot = slots[position];
    this.tf = this.tfs[position];
  }

  private nextBlock(): void {
    this.moveTo(this.block + 1);
  }

  /**
   * Decodes `block`, or exhausts the cursor when it is past the term's last. The exhausting branch only
   * stores: JSC compiles an operation that reads a value (a property, a module binding, a call's result)
   * and has never run as an exit to unoptimized code, and few searches exhaust a cursor before the search
   * is compiled (with a call to an exhaust() here: 53 exits in three 8-client cells at 1M chunks).
   */
  private moveTo(block: number): void {
    const { endBlock } = this;
    const exhausted = EXHAUSTED;
    if (block < endBlock) this.decode(block);
    else {
      this.block = endBlock;
      this.slot = exhausted;
      this.count = 0;
      this.position = 0;
    }
  }

  private blockCount(block: number): number {
    // Both fields read before the branch, whichever it takes (see moveTo).
    const { endBlock, lastBlockCount } = this;
    return block === endBlock - 1 ? lastBlockCount : BLOCK_SIZE;
  }

  /** The slot that the block's first gap counts from: the previous block's last (−1 for the term's first). */
  private slotBefore(block: number): number {
    // Read before the branch, whichever it takes (see moveTo); unused, and in bounds, for the term's first block.
    const previous = this.source.blockLast[Math.max(0, block - 1)];
    return block === this.firstBlock ? -1 : previous;
  }

  /** The hot loop of every keyword search. */
  private decode(block: number): void {
    const words = this.source.postingWords;
    const { slots, tfs } = this;
    const count = this.blockCount(block);
    let at = this.source.blockOffset[block] >>> 2;
    const header = words[at++];
    const gapBits = header & 0xff;
    const tfBits = header >>> 8;
    let slot = this.slotBefore(block);
    let mask = (1 << gapBits) - 1;
    let bit = 0;
    for (let i = 0; i < count; i++) {
      slot += unpack(words, at, bit, mask) + 1;
      slots[i] = slot;
      bit += gapBits;
      at += bit >>> 5;
      bit &= 31;
    }
    if (bit > 0) at++;
    if (tfBits === 0) tfs.fill(1, 0, count);
    else {
      mask = (1 << tfBits) - 1;
      bit = 0;
      for (let i = 0; i < count; i++) {
        tfs[i] = unpack(words, at, bit, mask) + 1;
        bit += tfBits;
        at += bit >>> 5;
        bit &= 31;
      }
    }
    this.block = block;
    this.count = count;
    this.position = 0;
    this.slot = slots[0];
    this.tf = tfs[0];
  }
}
