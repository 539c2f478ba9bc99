// Splitting one search across the search threads (segment-searcher.ts): each thread scores its shard
// of a segment and the best hits of all shards are the answer.

/**
 * The part of a segment one search thread scores: shard `index` of `count` takes that share of the
 * slots (keyword) or of every list it visits (vector), so the shards together score exactly what one
 * search would, each reads its own pages, and the best `limit` of all their hits are the answer.
 */
export interface Shard {
  index: number;
  count: number;
}

export const WHOLE: Shard = { index: 0, count: 1 };

/** Every shard of a search split `count` ways. */
export function allShards(count: number): Shard[] {
  return Array.from({ length: count }, (_, index) => ({ index, count }));
}

/** Shard `index`'s part [from, to) of the range [start, end). */
export function shardRange(start: number, end: number, { index, count }: Shard): [number, number] {
  const length = end - start;
  return [start + Math.floor((length * index) / count), start + Math.floor((length * (index + 1)) / count)];
}
