// Hybrid mode: the vector and keyword rankings merged by weighted Reciprocal Rank Fusion (see scores.ts).
import type { RowidHit } from "./rowid-hit.ts";
import { hybridScore } from "./scores.ts";

/** Both rankings best first; returns the `limit` best chunks by fused score (ties: lower rowid first). */
export function fuseRankings(vector: RowidHit[], keyword: RowidHit[], alpha: number, limit: number): RowidHit[] {
  const ranks = new Map<number, { vector: number | null; keyword: number | null }>();
  sharedRanks(vector, (rowid, rank) => ranks.set(rowid, { vector: rank, keyword: null }));
  sharedRanks(keyword, (rowid, rank) => {
    const entry = ranks.get(rowid);
    if (entry) entry.keyword = rank;
    else ranks.set(rowid, { vector: null, keyword: rank });
  });
  // The best `limit` kept in order as the candidates go by (a few hundred of them, for a top 10 or so):
  // sorting them all cost more than the rest of the fusion.
  const best: RowidHit[] = [];
  for (const [rowid, rank] of ranks) {
    const score = hybridScore(rank.vector, rank.keyword, alpha);
    if (score <= 0) continue;
    let at = best.length;
    while (at > 0 && ahead(score, rowid, best[at - 1])) at--;
    if (at >= limit) continue;
    best.splice(at, 0, { rowid, score });
    if (best.length > limit) best.pop();
  }
  return best;
}

/**
 * Each hit's rank from 1, hits of equal raw score sharing the best of their ranks (1, 2, 2, 4): a side
 * that cannot tell two chunks apart gives them the same rank, so copies of one text fuse to the same score.
 */
function sharedRanks(hits: RowidHit[], visit: (rowid: number, rank: number) => void): void {
  let rank = 0;
  hits.forEach((hit, i) => {
    if (i === 0 || hit.score !== hits[i - 1].score) rank = i + 1;
    visit(hit.rowid, rank);
  });
}

/** Whether (score, rowid) ranks before `hit`: a higher score, or the same and a lower rowid. */
function ahead(score: number, rowid: number, hit: RowidHit): boolean {
  return score > hit.score || (score === hit.score && rowid < hit.rowid);
}
