// What both keyword search strategies (max-score.ts, dense-sum.ts) start from: a cursor on each query
// term's postings with the term's BM25 factor. The window of scores they sum into is score-window.ts.
import { termWeight, type KeywordStats } from "./bm25.ts";
import { PostingCursor } from "./posting-cursor.ts";
import type { KeywordSegment } from "./segment.ts";
import type { TopK } from "../topk.ts";

export interface QueryTerm {
  id: number;
  term: string;
  /** Query weight from queryTermWeights. */
  weight: number;
}

export interface TermCursor {
  id: number;
  cursor: PostingCursor;
  /** weight · idf · (k1 + 1): the contribution is factor · tf / (tf + norm). */
  factor: number;
}

/** One search of a segment: its `limit` best chunks among the slots [from, to) that `eligible` admits. */
export interface SegmentQuery {
  segment: KeywordSegment;
  terms: QueryTerm[];
  stats: KeywordStats;
  /** By rowid; null admits every chunk. */
  eligible: Uint8Array | null;
  /** The share of the knowledge base's chunks `eligible` admits (1 without a filter). */
  eligibleShare: number;
  limit: number;
  range: [number, number];
}

/**
 * A way to answer a SegmentQuery exactly: the best `limit` slots. The caller turns them into hits, so that
 * the strategy's loop is not compiled (while the first search runs) before its last lines have ever run.
 */
export type SegmentSearchStrategy = (query: SegmentQuery) => TopK;

/** A cursor on each term's postings, placed at slot `from`. */
export function termCursors(segment: KeywordSegment, query: QueryTerm[], stats: KeywordStats, from: number): TermCursor[] {
  return query.map(({ id, term, weight }) => {
    const cursor = new PostingCursor(segment, id);
    cursor.advance(from);
    return { id, cursor, factor: termWeight(weight, stats, term) };
  });
}
