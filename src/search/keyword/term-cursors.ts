// What both keyword search strategies (max-score.ts, dense-sum.ts) start from: a cursor on each query
// term's postings with the term's BM25 factor, and the window of scores they sum into.
import { termWeight, type KeywordHit, type KeywordStats } from "./bm25.ts";
import { PostingCursor } from "./posting-cursor.ts";
import type { KeywordSegment } from "./segment.ts";
import { Kernels } from "../kernels/kernels.ts";

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
  limit: number;
  range: [number, number];
}

/** A way to answer a SegmentQuery exactly. */
export type SegmentSearchStrategy = (query: SegmentQuery) => KeywordHit[];

/** The most slots a window of scores covers. */
export const MAX_WINDOW = 16384;

export interface ScoreWindowMemory {
  /** Per-window accumulators, shared by all searches (they run synchronously); every score is reset to 0. */
  scores: Float64Array;
  /** The kernels whose memory holds `scores` from address 0 (dense-sum.ts reads them back with firstAbove). */
  kernels: Kernels;
}

let windowMemory: ScoreWindowMemory | null = null;

/** This thread's window of scores, made at its first keyword search. */
export function scoreWindowMemory(): ScoreWindowMemory {
  if (!windowMemory) {
    const kernels = new Kernels();
    kernels.reserve(MAX_WINDOW * Float64Array.BYTES_PER_ELEMENT);
    windowMemory = { scores: kernels.doubles.subarray(0, MAX_WINDOW), kernels };
  }
  return windowMemory;
}

/** A cursor on each term's postings, placed at slot `from`. */
export function termCursors(segment: KeywordSegment, query: QueryTerm[], stats: KeywordStats, from: number): TermCursor[] {
  return query.map(({ id, term, weight }) => {
    const cursor = new PostingCursor(segment, id);
    cursor.advance(from);
    return { id, cursor, factor: termWeight(weight, stats, term) };
  });
}
