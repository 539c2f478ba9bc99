// Hybrid mode: the vector and keyword rankings merged by weighted Reciprocal Rank Fusion (see scores.ts).
import type { RowidHit } from "./rowid-hit.ts";
import { hybridScore } from "./scores.ts";

/** Both rankings best first; returns the `limit` best chunks by fused score (ties: lower rowid first). */
export function fuseRankings(vector: RowidHit[], keyword: RowidHit[], alpha: number, limit: number): RowidHit[] {
  const ranks = new Map<number, { vector: number | null; keyword: number | null }>();
  vector.forEach((hit, i) => ranks.set(hit.rowid, { vector: i + 1, keyword: null }));
  keyword.forEach((hit, i) => {
    const entry = ranks.get(hit.rowid);
    if (entry) entry.keyword = i + 1;
    else ranks.set(hit.rowid, { vector: null, keyword: i + 1 });
  });
  return [...ranks]
    .map(([rowid, r]) => ({ rowid, score: hybridScore(r.vector, r.keyword, alpha) }))
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score || a.rowid - b.rowid)
    .slice(0, limit);
}
