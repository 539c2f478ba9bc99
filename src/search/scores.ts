// How each mode's raw relevance becomes the 0–1 score returned (higher is better; the same raw value
// always gives the same score). The route's OpenAPI description repeats these rules for users.

/** BM25 score that maps to 0.5 in keyword mode: a strong match on one or two distinctive terms. */
export const KEYWORD_SCORE_MIDPOINT = 10;

/** Reciprocal Rank Fusion constant (Cormack et al. 2009). */
export const RRF_K = 60;

/** Vector mode: cosine similarity, negatives clamped to 0. */
export function vectorScore(cosine: number): number {
  return Math.min(1, Math.max(0, cosine));
}

/** Keyword mode: BM25 saturated as s / (s + 10), so 0 stays 0 and no score reaches 1. */
export function keywordScore(bm25: number): number {
  return bm25 <= 0 ? 0 : bm25 / (bm25 + KEYWORD_SCORE_MIDPOINT);
}

/** A rank's RRF weight 1/(60 + rank), divided by that of rank 1 so that rank 1 weighs exactly 1. */
function rrfWeight(rank: number | null): number {
  return rank === null ? 0 : (RRF_K + 1) / (RRF_K + rank);
}

/**
 * Hybrid mode: alpha/(60 + vector rank) + (1 − alpha)/(60 + keyword rank), ranks from 1 (equal raw scores share the best of their ranks: fusion.ts), a side
 * contributing 0 where it did not find the chunk; divided by its maximum, 1/61 (first on both sides).
 * Each side is normalized before weighting, so first on both sides is exactly alpha + (1 − alpha) = 1.
 */
export function hybridScore(vectorRank: number | null, keywordRank: number | null, alpha: number): number {
  return Math.min(1, alpha * rrfWeight(vectorRank) + (1 - alpha) * rrfWeight(keywordRank));
}
