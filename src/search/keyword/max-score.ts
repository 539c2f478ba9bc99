// Top-k BM25 over a segment with MaxScore pruning, exact. Each query term gets an upper bound on what it
// can add to a chunk's score (from its blocks' greatest tf and least length). Terms are ordered by bound;
// once the k-th best score so far (θ) reaches the sum of the smallest bounds, chunks that contain only
// those "non-essential" terms cannot enter the top k, so only the other, "essential" terms' postings are
// walked. Chunks go by windows of slots: essential postings are summed into an accumulator, then each
// touched chunk looks up the non-essential terms (by skipping blocks) while it can still beat θ.
// Common terms thus cost a few block decodes instead of their whole posting lists.
import { lengthNorm, NORM_BASE, normPerTerm } from "./bm25.ts";
import { EXHAUSTED, type ScoreWindow } from "./posting-cursor.ts";
import { termCursors, type SegmentSearchStrategy, type TermCursor } from "./term-cursors.ts";
import { MAX_WINDOW, scoreWindowMemory } from "./score-window.ts";
import type { KeywordSegment } from "./segment.ts";
import { TopK } from "../topk.ts";

/** Windows start small so θ rises early, then grow to amortize the per-window work. */
const FIRST_WINDOW = 1024;
const SORT_AT_MOST = 32;
/** Bounds are summed in another order than scores: a margin keeps rounding from pruning a true hit. */
const BOUND_MARGIN = 1 + 1e-9;

interface ScoredTerm extends TermCursor {
  bound: number;
}

function upperBound(segment: KeywordSegment, term: number, factor: number, averageLength: number): number {
  let best = 0;
  for (let block = segment.termBlocks[term]; block < segment.termBlocks[term + 1]; block++) {
    const tf = segment.blockMaxTf[block];
    const bound = (factor * tf) / (tf + lengthNorm(segment.blockMinLen[block], averageLength));
    if (bound > best) best = bound;
  }
  return best;
}

const touched = new Int32Array(MAX_WINDOW);
const bits = new Int32Array(MAX_WINDOW / 32);

/** Sorts distinct offsets below `size` (typed-array sort costs far more). */
function bitmapSort(values: Int32Array, count: number, size: number): void {
  for (let i = 0; i < count; i++) bits[values[i] >>> 5] |= 1 << (values[i] & 31);
  let n = 0;
  for (let word = 0; word < (size + 31) >>> 5; word++) {
    let set = bits[word];
    if (set === 0) continue;
    bits[word] = 0;
    while (set !== 0) {
      const low = set & -set;
      values[n++] = (word << 5) | (31 - Math.clz32(low));
      set ^= low;
    }
  }
}

function insertionSort(values: Int32Array, count: number): void {
  for (let i = 1; i < count; i++) {
    const value = values[i];
    let j = i - 1;
    for (; j >= 0 && values[j] > value; j--) values[j + 1] = values[j];
    values[j + 1] = value;
  }
}

/**
 * The terms by bound, smallest first, in place (stable, as sort() is). A few dozen at most: Array.prototype.sort
 * with a comparator, compiled into the search, failed a speculation in more than half of the searches (JSC
 * OSR exits, "Overflow"), each sending the rest of that search to unoptimized code, and after enough of them
 * the whole function back to be compiled again.
 */
function byBound(terms: ScoredTerm[]): ScoredTerm[] {
  for (let i = 1; i < terms.length; i++) {
    const term = terms[i];
    let j = i - 1;
    for (; j >= 0 && terms[j].bound > term.bound; j--) terms[j + 1] = terms[j];
    terms[j + 1] = term;
  }
  return terms;
}

export const maxScoreSearch: SegmentSearchStrategy = ({ segment, terms: query, stats, eligible, limit, range: [from, to] }) => {
  const average = stats.averageLength;
  const terms: ScoredTerm[] = byBound(
    termCursors(segment, query, stats, from).map(({ id, cursor, factor }) => ({ id, cursor, factor, bound: upperBound(segment, id, factor, average) })),
  );
  // prefix[j]: the most terms 0…j can add together.
  const prefix = new Float64Array(terms.length);
  terms.forEach((term, j) => (prefix[j] = (j > 0 ? prefix[j - 1] : 0) + term.bound * BOUND_MARGIN));

  const { lengths, rowids } = segment;
  const { scores } = scoreWindowMemory();
  const best = new TopK(limit);
  const perTerm = normPerTerm(average);
  let windowSize = FIRST_WINDOW;
  const window: ScoreWindow = { low: 0, lengths, normBase: NORM_BASE, normPerTerm: perTerm, scores, eligible, rowids };
  let essential = 0;
  for (;;) {
    while (essential < terms.length && prefix[essential] <= best.threshold) essential++;
    let low = EXHAUSTED;
    for (let e = essential; e < terms.length; e++) low = Math.min(low, terms[e].cursor.slot);
    if (low >= to) break;
    const high = Math.min(low + windowSize, to);
    windowSize = Math.min(windowSize * 2, MAX_WINDOW);
    window.low = low;

    let touchedCount = 0;
    for (let e = essential; e < terms.length; e++) {
      const { cursor, factor } = terms[e];
      touchedCount = cursor.accumulate(high, factor, window, touched, touchedCount);
    }
    // Non-essential cursors only move forward, so candidates must come in slot order when there are
    // such terms: a few are insertion-sorted, more are put in order through a bitmap of the window.
    if (touchedCount <= SORT_AT_MOST) insertionSort(touched, touchedCount);
    else if (essential > 0) bitmapSort(touched, touchedCount, high - low);

    for (let t = 0; t < touchedCount; t++) {
      const i = touched[t];
      const slot = low + i;
      let score = scores[i];
      scores[i] = 0;
      const threshold = best.threshold;
      let j = essential - 1;
      for (; j >= 0; j--) {
        if (score + prefix[j] <= threshold) break;
        const { cursor, factor } = terms[j];
        cursor.advance(slot);
        if (cursor.slot === slot) score += (factor * cursor.tf) / (cursor.tf + (NORM_BASE + perTerm * lengths[slot]));
      }
      if (j < 0) best.push(slot, score);
    }
  }
  return best;
};
