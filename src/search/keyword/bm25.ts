// BM25 pieces shared by the in-memory keyword index (a knowledge base's delta) and the on-disk keyword
// segment, so both score a chunk with the very same arithmetic and their scores can be merged.
import { keywordTerms } from "../tokenize.ts";

/**
 * BM25 term-frequency saturation and length normalization. One setting for every collection, picked on a
 * flat optimum of mean nDCG@10 over the five evaluation collections (bench:quality): 1.5/0.6 gave 0.467,
 * the textbook 1.2/0.75 0.462; chunks are short passages, for which less length normalization suits.
 */
export const BM25_K1 = 1.5;
export const BM25_B = 0.6;

/**
 * The collection statistics a search scores with. A knowledge base's segment and delta are searched with
 * the same (combined) figures, so a chunk scores the same wherever it is stored.
 */
export interface KeywordStats {
  chunkCount: number;
  averageLength: number;
  documentFrequency(term: string): number;
}

/** A keyword search result: the chunk's rowid and its raw BM25 score (higher is better). */
export interface KeywordHit {
  rowid: number;
  score: number;
}

/** Inverse document frequency, BM25's non-negative variant. */
export function idf(chunkCount: number, documentFrequency: number): number {
  return Math.log(1 + (chunkCount - documentFrequency + 0.5) / (documentFrequency + 0.5));
}

/** A query term's factor before term frequency: query weight · idf · (k1 + 1). */
export function termWeight(queryWeight: number, stats: KeywordStats, term: string): number {
  return queryWeight * idf(stats.chunkCount, stats.documentFrequency(term)) * (BM25_K1 + 1);
}

/** BM25's length normalization k1·(1 − b + b·length/average) as NORM_BASE + normPerTerm(average) · length. */
export const NORM_BASE = BM25_K1 * (1 - BM25_B);

export function normPerTerm(averageLength: number): number {
  return (BM25_K1 * BM25_B) / averageLength;
}

export function lengthNorm(length: number, averageLength: number): number {
  return NORM_BASE + normPerTerm(averageLength) * length;
}

/** Query terms with their weight: a repeated term counts more, with saturation (BM25's k3 = 1). */
export function queryTermWeights(query: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of keywordTerms(query)) counts.set(term, (counts.get(term) ?? 0) + 1);
  const weights = new Map<string, number>();
  for (const [term, qtf] of counts) weights.set(term, (2 * qtf) / (1 + qtf));
  return weights;
}
