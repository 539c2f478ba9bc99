// Lloyd's k-means over flat Float32 matrices (rows of `dimension` values), shared by the inverted file's
// lists (spherical: unit centroids, nearest by dot product; vector/ivf.ts) and the product quantizer's
// codebooks (Euclidean; vector/pq.ts). Both find the nearest centroid as the largest p·c − ‖c‖²/2, which
// is the Euclidean nearest and, for unit centroids, the one with the largest dot product.

export function dot(a: Float32Array, aOffset: number, b: Float32Array, bOffset: number, dimension: number): number {
  let x = 0;
  let y = 0;
  let z = 0;
  let w = 0;
  let i = 0;
  for (; i + 3 < dimension; i += 4) {
    x += a[aOffset + i] * b[bOffset + i];
    y += a[aOffset + i + 1] * b[bOffset + i + 1];
    z += a[aOffset + i + 2] * b[bOffset + i + 2];
    w += a[aOffset + i + 3] * b[bOffset + i + 3];
  }
  for (; i < dimension; i++) x += a[aOffset + i] * b[bOffset + i];
  return x + y + z + w;
}

/** ‖c‖²/2 of each centroid. */
export function halfSquaredNorms(centroids: Float32Array, dimension: number): Float32Array {
  const k = centroids.length / dimension;
  const out = new Float32Array(k);
  for (let c = 0; c < k; c++) out[c] = dot(centroids, c * dimension, centroids, c * dimension, dimension) / 2;
  return out;
}

/**
 * The index in [from, to) of the centroid nearest vectors[offset...]: the largest p·c − halfNorms[c]
 * (halfNorms null: unit centroids, the largest dot product).
 */
export function nearest(
  centroids: Float32Array,
  halfNorms: Float32Array | null,
  from: number,
  to: number,
  vectors: Float32Array,
  offset: number,
  dimension: number,
): number {
  let best = from;
  let bestScore = -Infinity;
  for (let c = from; c < to; c++) {
    const score = dot(centroids, c * dimension, vectors, offset, dimension) - (halfNorms ? halfNorms[c] : 0);
    if (score > bestScore) (bestScore = score), (best = c);
  }
  return best;
}

export function normalizeRows(matrix: Float32Array, dimension: number): void {
  for (let offset = 0; offset < matrix.length; offset += dimension) {
    const norm = Math.sqrt(dot(matrix, offset, matrix, offset, dimension));
    if (norm > 0) for (let i = offset; i < offset + dimension; i++) matrix[i] /= norm;
  }
}

/**
 * Rounds of k-means from the given centroids, in place: each centroid becomes the mean of its points
 * (normalized when `spherical`); a centroid left without points takes another point.
 */
export function lloyd(points: Float32Array, centroids: Float32Array, dimension: number, rounds: number, spherical: boolean): void {
  const n = points.length / dimension;
  const k = centroids.length / dimension;
  const sizes = new Int32Array(k);
  for (let round = 0; round < rounds; round++) {
    const halfNorms = spherical ? null : halfSquaredNorms(centroids, dimension);
    const sums = new Float64Array(k * dimension);
    sizes.fill(0);
    for (let p = 0; p < n; p++) {
      const c = nearest(centroids, halfNorms, 0, k, points, p * dimension, dimension);
      sizes[c]++;
      for (let i = 0; i < dimension; i++) sums[c * dimension + i] += points[p * dimension + i];
    }
    for (let c = 0; c < k; c++) {
      if (sizes[c] === 0) {
        const from = ((c * 7919 + round * 104729) % n) * dimension;
        centroids.set(points.subarray(from, from + dimension), c * dimension);
      } else for (let i = 0; i < dimension; i++) centroids[c * dimension + i] = sums[c * dimension + i] / sizes[c];
    }
    if (spherical) normalizeRows(centroids, dimension);
  }
}

/** `k` centroids for `points` (n × dimension, n >= k): seeded with evenly spaced points, then `rounds` of lloyd. */
export function kMeans(points: Float32Array, k: number, dimension: number, rounds: number, spherical: boolean): Float32Array {
  const n = points.length / dimension;
  const centroids = new Float32Array(k * dimension);
  for (let c = 0; c < k; c++) {
    const from = Math.floor((c * n) / k) * dimension;
    centroids.set(points.subarray(from, from + dimension), c * dimension);
  }
  if (k > 1) lloyd(points, centroids, dimension, rounds, spherical);
  return centroids;
}
