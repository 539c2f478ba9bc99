import type { TopK } from "./topk.ts";

/** A chunk found by a search side, by its rowid, with that side's raw score (higher is better). */
export interface RowidHit {
  rowid: number;
  score: number;
}

/** The `limit` best of several best-first lists. */
export function mergeHits(lists: RowidHit[][], limit: number): RowidHit[] {
  return lists
    .flat()
    .sort((a, b) => b.score - a.score || a.rowid - b.rowid)
    .slice(0, limit);
}

/** mergeHits of the hits of a search's shards, each already its best `limit` at most: one shard's as they are. */
export function mergeShardHits(lists: RowidHit[][], limit: number): RowidHit[] {
  return lists.length === 1 ? lists[0] : mergeHits(lists, limit);
}

/** The hits `best` holds, best first: its ids are slots of a segment, whose rowids are `rowids[slot]`. */
export function hitsBySlot(best: TopK, rowids: ArrayLike<number>): RowidHit[] {
  return best.sorted().map((hit) => ({ rowid: rowids[hit.id], score: hit.score }));
}
