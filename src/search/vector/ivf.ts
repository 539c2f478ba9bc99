// The coarse quantizer of a vector segment (an inverted file, IVF): the segment's vectors are split into
// lists around unit centroids found by spherical k-means, and a search scores only the lists whose
// centroids are nearest the query. Unlike a graph, this cannot strand a search in a region of
// near-duplicates (an HNSW graph over 1M chunks with dozens of near-copies of each passage found 0.22-0.70
// of the exact top 10), its cost is fixed by how many vectors it scores, and opening it reads no graph.
//
// The brute-force steps of building (k-means assignment, assigning every vector to its list) run in
// usearch's native exact search, ~5 billion multiply-adds a second here against ~1.7 in JavaScript.

import { availableParallelism } from "node:os";

/** Segments smaller than this are one list: scoring every vector costs a few milliseconds. */
export const FLAT_BELOW = 8192;
/** Vectors sampled per list to train the centroids. */
const TRAIN_PER_LIST = 32;
const TRAIN_ROUNDS = 8;
/** Vectors assigned to their lists per call into usearch. */
const ASSIGN_BATCH = 4096;

/** How many lists a segment of `count` vectors gets: ~sqrt(count), so ~1,000 lists of ~1,000 at 1M. */
export function listCount(count: number): number {
  return count < FLAT_BELOW ? 1 : Math.round(Math.sqrt(count));
}

let usearch: typeof import("usearch") | null = null;
/** Required on first use, not imported: in a compiled binary its addon exists only once prepareRuntime has unpacked it. */
export function native(): typeof import("usearch") {
  return (usearch ??= require("usearch") as typeof import("usearch"));
}

/** Threads for the native steps: all cores but one, left to the HTTP thread. */
export function threads(): number {
  return Math.max(1, availableParallelism() - 1);
}

/** The nearest of `centroids` (unit, lists × dimension) to each of `vectors` (unit, n × dimension). */
export function nearestLists(centroids: Float32Array, vectors: Float32Array, dimension: number): Int32Array {
  const n = vectors.length / dimension;
  const out = new Int32Array(n);
  if (centroids.length === dimension) return out;
  const { MetricKind, exactSearch } = native();
  for (let start = 0; start < n; start += ASSIGN_BATCH) {
    const end = Math.min(n, start + ASSIGN_BATCH);
    // A copy, not a subarray: usearch reads a typed array from the start of its buffer.
    const { keys } = exactSearch(centroids, vectors.slice(start * dimension, end * dimension), dimension, 1, MetricKind.IP, threads());
    for (let i = start; i < end; i++) out[i] = Number(keys[i - start]);
  }
  return out;
}

function normalizeRows(matrix: Float32Array, dimension: number): void {
  for (let offset = 0; offset < matrix.length; offset += dimension) {
    let norm = 0;
    for (let i = offset; i < offset + dimension; i++) norm += matrix[i] * matrix[i];
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = offset; i < offset + dimension; i++) matrix[i] /= norm;
  }
}

/** How many vectors to sample for training `lists` centroids out of `count`. */
export function trainingSize(lists: number, count: number): number {
  return Math.min(count, lists * TRAIN_PER_LIST);
}

/**
 * `lists` unit centroids for the unit vectors of `sample` (n × dimension, n >= lists) by spherical
 * k-means: seeded with evenly spaced sample vectors; a list left empty takes another sample vector.
 */
export function trainCentroids(sample: Float32Array, lists: number, dimension: number): Float32Array {
  const n = sample.length / dimension;
  if (n < lists) throw new Error(`Training ${lists} lists needs at least ${lists} vectors (got ${n})`);
  const centroids = new Float32Array(lists * dimension);
  for (let list = 0; list < lists; list++) {
    const from = Math.floor((list * n) / lists) * dimension;
    centroids.set(sample.subarray(from, from + dimension), list * dimension);
  }
  if (lists === 1) return centroids;
  const sizes = new Int32Array(lists);
  for (let round = 0; round < TRAIN_ROUNDS; round++) {
    const assigned = nearestLists(centroids, sample, dimension);
    centroids.fill(0);
    sizes.fill(0);
    for (let v = 0; v < n; v++) {
      const list = assigned[v];
      sizes[list]++;
      const to = list * dimension;
      const from = v * dimension;
      for (let i = 0; i < dimension; i++) centroids[to + i] += sample[from + i];
    }
    for (let list = 0; list < lists; list++) {
      if (sizes[list] > 0) continue;
      const from = ((list * 7919 + round * 104729) % n) * dimension;
      centroids.set(sample.subarray(from, from + dimension), list * dimension);
    }
    normalizeRows(centroids, dimension);
  }
  return centroids;
}

/** The lists ordered by their centroids' similarity to the query, nearest first. */
export function rankLists(centroids: Float32Array, query: Float32Array): Int32Array {
  const dimension = query.length;
  const lists = centroids.length / dimension;
  const scores = new Float64Array(lists);
  for (let list = 0; list < lists; list++) {
    const offset = list * dimension;
    let a = 0;
    let b = 0;
    let i = 0;
    for (; i + 1 < dimension; i += 2) {
      a += query[i] * centroids[offset + i];
      b += query[i + 1] * centroids[offset + i + 1];
    }
    if (i < dimension) a += query[i] * centroids[offset + i];
    scores[list] = a + b;
  }
  return Int32Array.from({ length: lists }, (_, i) => i).sort((x, y) => scores[y] - scores[x]);
}
