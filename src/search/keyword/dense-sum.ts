// Top-k BM25 over a segment by summing every posting: chunks go by windows of slots, each term's postings
// in the window are added into the window's scores, and the scores are read back in slot order. No
// bound, no lookup per candidate: for queries whose terms cover most chunks this is the cheaper way.
// Kept apart from MaxScore (max-score.ts) on purpose: when one function served both ways, the JIT
// compiled it for the first one it saw, and the other ran 2.3 times slower (8.4 -> 19.5 ms a query).
import { NORM_BASE, normPerTerm } from "./bm25.ts";
import { termCursors, type SegmentSearchStrategy } from "./term-cursors.ts";
import { MAX_WINDOW, scoreWindowMemory } from "./score-window.ts";
import { TopK } from "../topk.ts";
import { MarkedSlots } from "../marked-slots.ts";

/**
 * Below this share of the chunks, a filtered window is read back by walking the chunks the filter admits
 * (marked-slots.ts) rather than every score above the threshold: with few chunks admitted the heap fills
 * slowly, its threshold stays low, and most chunks above it were ones the filter drops. 1M chunks, the
 * evaluation queries, top 10 / top 100, ms a query, walking against not: 1 % of the chunks 2.08 / 2.15
 * against 2.47 / 3.43; 5 % 2.23 / 2.32 against 1.97 / 2.54; 10 % 2.47 / 2.54 against 1.85 / 2.50.
 */
const WALK_BELOW_SHARE = 1 / 32;

export const denseSumSearch: SegmentSearchStrategy = ({ segment, terms: query, stats, eligible, eligibleShare, limit, range: [from, to] }) => {
  const terms = termCursors(segment, query, stats, from);
  const { rowids } = segment;
  const window = scoreWindowMemory();
  const { scores, kernels } = window;
  window.lengths = segment.lengths;
  window.normBase = NORM_BASE;
  window.normPerTerm = normPerTerm(stats.averageLength);
  const best = new TopK(limit);
  const marked = eligible !== null && eligibleShare < WALK_BELOW_SHARE ? new MarkedSlots(rowids, eligible) : null;
  for (;;) {
    let low = to;
    for (const { cursor } of terms) low = Math.min(low, cursor.slot);
    if (low >= to) break;
    const high = Math.min(low + MAX_WINDOW, to);
    window.moveWindow(low, high);
    // Every chunk's postings are summed, a filter's ineligible ones too: the filter is applied as the
    // window is read back, so that whole blocks go to the kernel as they are.
    for (const { cursor, factor } of terms) cursor.sum(high, factor, window);
    // Contributions are positive, so the chunks scored are those above 0. Once the heap is full nearly
    // every chunk falls short of its threshold: the kernel skips them four at a time, and clears them as it
    // goes (takeAbove), each one it returns cleared here, so the window is all zeros again at the end.
    let threshold = Math.max(best.threshold, 0);
    const size = high - low;
    if (marked !== null) {
      marked.forEachRun(low, high, (start, end) => {
        for (let slot = start; slot < end; slot++) {
          const score = scores[slot - low];
          if (score <= threshold) continue;
          best.push(slot, score);
          threshold = Math.max(best.threshold, 0);
        }
      });
      scores.fill(0, 0, size);
    } else {
      const end = size * Float64Array.BYTES_PER_ELEMENT;
      for (let at = kernels.takeAbove(0, end, threshold); at < end; at = kernels.takeAbove(at + 8, end, threshold)) {
        const score = scores[at >>> 3];
        scores[at >>> 3] = 0;
        const slot = low + (at >>> 3);
        if (eligible !== null && eligible[rowids[slot]] !== 1) continue;
        best.push(slot, score);
        threshold = Math.max(best.threshold, 0);
      }
    }
  }
  return best;
};
