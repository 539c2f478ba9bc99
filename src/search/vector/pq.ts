// Product quantization of the vectors of a segment's lists (vector/ivf.ts): each vector is cut into
// sub-vectors of SUB_DIMENSION values and each sub-vector replaced by the index of the nearest of
// PQ_CENTROIDS centroids trained for its position, so a 512-d vector is 64 bytes. A query's similarity to
// every centroid is tabled once; a vector's approximate score is then one table lookup per sub-vector,
// ~4× cheaper in JavaScript than scoring its 8-bit codes (~85 ns against ~300 ns at 512-d). Searches rank
// by this and re-score the best few hundred on the 8-bit codes.

/** Values per sub-vector, when the dimension allows (else the largest of 4, 2, 1 that divides it). */
const SUB_DIMENSION = 8;
/**
 * Centroids per part. Measured at 100k near-real vectors (scripts/bench/vector-segment.ts): with 64 the
 * re-scored top 256 lose no recall against scoring every probed vector exactly (16 lose 0.01-0.02), and
 * encoding costs 64 × dimension multiply-adds a vector (~35 s per million in JavaScript).
 */
export const PQ_CENTROIDS = 64;
const CENTROIDS = PQ_CENTROIDS;
const TRAIN_ROUNDS = 10;
/** Vectors encoded per pass over the parts. */
const ENCODE_BATCH = 4096;

export class ProductQuantizer {
  readonly subDimension: number;
  /** Sub-vectors per vector: the bytes of one vector's code. */
  readonly parts: number;

  /** `codebooks`: parts × CENTROIDS × subDimension centroid values. */
  constructor(
    readonly dimension: number,
    readonly codebooks: Float32Array,
  ) {
    this.subDimension = [SUB_DIMENSION, 4, 2, 1].find((size) => dimension % size === 0)!;
    this.parts = dimension / this.subDimension;
    if (codebooks.length !== dimension * CENTROIDS) throw new Error(`Product quantizer codebooks hold ${codebooks.length} values, not ${dimension * CENTROIDS}`);
  }

  /** Trains the codebooks on `sample` (n × dimension, n >= PQ_CENTROIDS) by k-means per sub-vector position. */
  static train(sample: Float32Array, dimension: number): ProductQuantizer {
    const pq = new ProductQuantizer(dimension, new Float32Array(dimension * CENTROIDS));
    const n = sample.length / dimension;
    if (n < CENTROIDS) throw new Error(`Training a product quantizer needs at least ${CENTROIDS} vectors (got ${n})`);
    const { subDimension: d } = pq;
    for (let part = 0; part < pq.parts; part++) {
      const points = pq.subVectors(sample, part);
      const centroids = new Float32Array(CENTROIDS * d);
      for (let c = 0; c < CENTROIDS; c++) centroids.set(points.subarray(Math.floor((c * n) / CENTROIDS) * d, Math.floor((c * n) / CENTROIDS) * d + d), c * d);
      const sizes = new Int32Array(CENTROIDS);
      for (let round = 0; round < TRAIN_ROUNDS; round++) {
        const nearest = nearestCentroids(centroids, points, d);
        const sums = new Float64Array(CENTROIDS * d);
        sizes.fill(0);
        for (let v = 0; v < n; v++) {
          sizes[nearest[v]]++;
          for (let i = 0; i < d; i++) sums[nearest[v] * d + i] += points[v * d + i];
        }
        for (let c = 0; c < CENTROIDS; c++) {
          // An empty centroid takes another point, so that every code is used.
          if (sizes[c] === 0) centroids.set(points.subarray(((c * 7919 + round * 104729) % n) * d, ((c * 7919 + round * 104729) % n) * d + d), c * d);
          else for (let i = 0; i < d; i++) centroids[c * d + i] = sums[c * d + i] / sizes[c];
        }
      }
      pq.codebooks.set(centroids, part * CENTROIDS * d);
    }
    return pq;
  }

  /** The codes of `vectors` (n × dimension): parts bytes per vector. */
  encode(vectors: Float32Array): Uint8Array {
    const n = vectors.length / this.dimension;
    const codes = new Uint8Array(n * this.parts);
    const d = this.subDimension;
    for (let start = 0; start < n; start += ENCODE_BATCH) {
      const batch = vectors.subarray(start * this.dimension, Math.min(n, start + ENCODE_BATCH) * this.dimension);
      for (let part = 0; part < this.parts; part++) {
        const centroids = this.codebooks.slice(part * CENTROIDS * d, (part + 1) * CENTROIDS * d);
        const nearest = nearestCentroids(centroids, this.subVectors(batch, part), d);
        for (let v = 0; v < nearest.length; v++) codes[(start + v) * this.parts + part] = nearest[v];
      }
    }
    return codes;
  }

  /** The query's similarity to every centroid of every part: parts × PQ_CENTROIDS, by part then code. */
  table(query: Float32Array): Float32Array {
    const d = this.subDimension;
    const table = new Float32Array(this.parts * CENTROIDS);
    for (let part = 0; part < this.parts; part++) {
      for (let c = 0; c < CENTROIDS; c++) {
        const at = (part * CENTROIDS + c) * d;
        let dot = 0;
        for (let i = 0; i < d; i++) dot += query[part * d + i] * this.codebooks[at + i];
        table[part * CENTROIDS + c] = dot;
      }
    }
    return table;
  }

  /** The sub-vectors at position `part` of `vectors`, contiguous. */
  private subVectors(vectors: Float32Array, part: number): Float32Array {
    const n = vectors.length / this.dimension;
    const d = this.subDimension;
    const out = new Float32Array(n * d);
    for (let v = 0; v < n; v++) out.set(vectors.subarray(v * this.dimension + part * d, v * this.dimension + part * d + d), v * d);
    return out;
  }
}

/** The approximate similarity of the query whose table is given to the vector coded at codes[offset...]. */
export function tableScore(table: Float32Array, codes: Uint8Array, offset: number, parts: number): number {
  let a = 0;
  let b = 0;
  let part = 0;
  for (; part + 1 < parts; part += 2) {
    a += table[part * PQ_CENTROIDS + codes[offset + part]];
    b += table[(part + 1) * PQ_CENTROIDS + codes[offset + part + 1]];
  }
  if (part < parts) a += table[part * PQ_CENTROIDS + codes[offset + part]];
  return a + b;
}

/** The nearest (Euclidean) of `centroids` to each of `points`, both d-dimensional. */
function nearestCentroids(centroids: Float32Array, points: Float32Array, d: number): Uint8Array {
  const k = centroids.length / d;
  const n = points.length / d;
  const out = new Uint8Array(n);
  // ||p - c||² = ||p||² - 2 p·c + ||c||²; ||p||² is the same for every c.
  const norms = new Float32Array(k);
  for (let c = 0; c < k; c++) for (let i = 0; i < d; i++) norms[c] += centroids[c * d + i] * centroids[c * d + i];
  for (let p = 0; p < n; p++) {
    let best = 0;
    let bestDistance = Infinity;
    for (let c = 0; c < k; c++) {
      let dot = 0;
      for (let i = 0; i < d; i++) dot += points[p * d + i] * centroids[c * d + i];
      const distance = norms[c] - 2 * dot;
      if (distance < bestDistance) (bestDistance = distance), (best = c);
    }
    out[p] = best;
  }
  return out;
}
