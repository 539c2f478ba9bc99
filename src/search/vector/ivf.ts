// The coarse quantizer of a vector segment (an inverted file, IVF): the segment's vectors are split into
// lists around unit centroids, and a search scores only the lists whose centroids are nearest the query.
// Unlike a graph, this cannot strand a search in a region of near-duplicates (an HNSW graph over 1M
// chunks with dozens of near-copies of each passage found 0.22-0.70 of the exact top 10), its cost is
// fixed by how many vectors it scores, and opening it reads no graph.
//
// The lists come from two-level spherical k-means: ~sqrt(lists) groups, then each group split into lists
// in proportion to its size. Training and assigning a vector then compare it with ~3 × sqrt(lists)
// centroids instead of all of them, which keeps a million-vector build in JavaScript to tens of seconds.

import { dot, kMeans, lloyd, nearest } from "./k-means.ts";

/** Segments smaller than this are one list: scoring every vector costs a few milliseconds. */
export const FLAT_BELOW = 8192;
/** Vectors sampled per list to train the centroids. */
const TRAIN_PER_LIST = 32;
const TRAIN_ROUNDS = 8;
/** A vector is assigned to the nearest list within its this many nearest groups. */
const GROUPS_SEARCHED = 2;
/** Rounds of k-means over all the lists at once after the two levels: they let lists cross group borders. */
const REFINE_ROUNDS = 3;

/** How many lists a segment of `count` vectors gets: ~sqrt(count), so ~1,000 lists of ~1,000 at 1M. */
export function listCount(count: number): number {
  return count < FLAT_BELOW ? 1 : Math.round(Math.sqrt(count));
}

/** How many vectors to sample for training `lists` centroids out of `count`. */
export function trainingSize(lists: number, count: number): number {
  return Math.min(count, lists * TRAIN_PER_LIST);
}

/** The two-level quantizer: lists (leaf centroids) grouped under group centroids. */
export interface CoarseQuantizer {
  /** lists × dimension unit centroids. */
  centroids: Float32Array;
  /** groups × dimension unit centroids. */
  groups: Float32Array;
  /** groups + 1 entries: group g's lists are [groupStarts[g], groupStarts[g + 1]). */
  groupStarts: Int32Array;
}

function sphericalKMeans(points: Float32Array, k: number, dimension: number): Float32Array {
  return kMeans(points, k, dimension, TRAIN_ROUNDS, true);
}

/** Trains `lists` centroids on `sample` (unit vectors, n × dimension, n >= lists). */
export function trainCoarseQuantizer(sample: Float32Array, lists: number, dimension: number): CoarseQuantizer {
  const n = sample.length / dimension;
  if (n < lists) throw new Error(`Training ${lists} lists needs at least ${lists} vectors (got ${n})`);
  const groupCount = Math.ceil(Math.sqrt(lists));
  const groups = sphericalKMeans(sample, groupCount, dimension);
  const members: number[][] = Array.from({ length: groupCount }, () => []);
  for (let p = 0; p < n; p++) members[nearest(groups, null, 0, groupCount, sample, p * dimension, dimension)].push(p);
  // Lists per group in proportion to its sample (largest remainders), at most one per sample vector.
  const shares = members.map((m) => (lists * m.length) / n);
  const perGroup = shares.map(Math.floor);
  const order = shares.map((share, g) => g).sort((a, b) => shares[b] - perGroup[b] - (shares[a] - perGroup[a]));
  for (let extra = lists - perGroup.reduce((a, b) => a + b, 0), i = 0; extra > 0; i = (i + 1) % groupCount) {
    if (perGroup[order[i]] < members[order[i]].length) perGroup[order[i]]++, extra--;
  }
  const centroids = new Float32Array(lists * dimension);
  const groupStarts = new Int32Array(groupCount + 1);
  for (let g = 0; g < groupCount; g++) {
    groupStarts[g + 1] = groupStarts[g] + perGroup[g];
    if (perGroup[g] === 0) continue;
    const points = new Float32Array(members[g].length * dimension);
    members[g].forEach((p, i) => points.set(sample.subarray(p * dimension, (p + 1) * dimension), i * dimension));
    centroids.set(sphericalKMeans(points, perGroup[g], dimension), groupStarts[g] * dimension);
  }
  lloyd(sample, centroids, dimension, REFINE_ROUNDS, true);
  return { centroids, groups, groupStarts };
}

/** The list of each of `vectors` (n × dimension): the nearest list within its GROUPS_SEARCHED nearest groups. */
export function assignLists(quantizer: CoarseQuantizer, vectors: Float32Array, dimension: number): Int32Array {
  const { centroids, groups, groupStarts } = quantizer;
  const groupCount = groupStarts.length - 1;
  const n = vectors.length / dimension;
  const out = new Int32Array(n);
  const groupScores = new Float64Array(groupCount);
  for (let v = 0; v < n; v++) {
    const offset = v * dimension;
    for (let g = 0; g < groupCount; g++) groupScores[g] = groupStarts[g + 1] > groupStarts[g] ? dot(groups, g * dimension, vectors, offset, dimension) : -Infinity;
    let best = 0;
    let bestScore = -Infinity;
    for (let searched = 0; searched < Math.min(GROUPS_SEARCHED, groupCount); searched++) {
      let g = 0;
      for (let h = 1; h < groupCount; h++) if (groupScores[h] > groupScores[g]) g = h;
      if (groupScores[g] === -Infinity) break;
      groupScores[g] = -Infinity;
      const list = nearest(centroids, null, groupStarts[g], groupStarts[g + 1], vectors, offset, dimension);
      const score = dot(centroids, list * dimension, vectors, offset, dimension);
      if (score > bestScore) (bestScore = score), (best = list);
    }
    out[v] = best;
  }
  return out;
}
