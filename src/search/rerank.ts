// Cross-encoder reranking under a deadline: a reranker that fails or is too slow never fails the search;
// the caller keeps the first-stage order instead.
import type { Reranker } from "../models/types.ts";

/** Candidates sent to the reranker: this many times top_k, and at least RERANK_POOL_MIN. */
export const RERANK_POOL_FACTOR = 3;
export const RERANK_POOL_MIN = 20;

export function rerankPool(topK: number): number {
  return Math.max(RERANK_POOL_MIN, RERANK_POOL_FACTOR * topK);
}

/** The reranker's probability for each passage, or null when it failed or missed the deadline. */
export async function rerankScores(reranker: Reranker, query: string, passages: string[], timeoutMs: number): Promise<number[] | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  const scoring = reranker.score(query, passages).then(
    (scores) => (scores.length === passages.length && scores.every(Number.isFinite) ? scores : null),
    () => null,
  );
  try {
    return await Promise.race([scoring, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
