// Product quantization of the vectors of a segment's lists (vector/ivf.ts): each vector is cut into
// sub-vectors of SUB_DIMENSION values and each sub-vector replaced by the index of the nearest of
// PQ_CENTROIDS centroids trained for its position, so a 512-d vector is 64 bytes. A query's similarity to
// every centroid is tabled once, in bytes; a vector's approximate score is then one table lookup per
// sub-vector, 16 vectors at a time in WebAssembly (pq-scan.ts, pq-blocks.ts). Searches rank by this and
// re-score the best thousand or so on the 8-bit codes (code-scan.ts).
import { Kernels } from "../kernels/kernels.ts";
import { halfSquaredNorms, kMeans, nearest } from "./k-means.ts";

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
  /** A copy of the codebooks in a kernel instance's memory, for the tables (made at the first). */
  private kernels: Kernels | null = null;

  /** `codebooks`: parts × CENTROIDS × subDimension centroid values. */
  constructor(
    readonly dimension: number,
    readonly codebooks: Float32Array,
  ) {
    this.subDimension = subDimensionOf(dimension);
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
      pq.codebooks.set(kMeans(pq.subVectors(sample, part), CENTROIDS, d, TRAIN_ROUNDS, false), part * CENTROIDS * d);
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
        const centroids = this.codebooks.subarray(part * CENTROIDS * d, (part + 1) * CENTROIDS * d);
        const halfNorms = halfSquaredNorms(centroids, d);
        const points = this.subVectors(batch, part);
        for (let v = 0; v < points.length / d; v++) codes[(start + v) * this.parts + part] = nearest(centroids, halfNorms, 0, CENTROIDS, points, v * d, d);
      }
    }
    return codes;
  }

  /**
   * The query's similarity to every centroid of every part (parts × PQ_CENTROIDS, by part then code), as
   * bytes for the kernel: each part's values less the part's smallest, in steps of the widest part's
   * range / top, rounded. A vector's sum of its parts' bytes then ranks it as the float sum would, up to
   * half a step per part; `top` (255, less past 257 parts) keeps every sum within 16 bits.
   */
  lookupTable(query: Float32Array): Uint8Array {
    const d = this.subDimension;
    // The similarities by the kernel, bit for bit dot() (at 1M chunks, 512-d: 0.23 ms a query in JavaScript).
    const kernels = this.tableKernels();
    const { similaritiesAt, codebooksAt } = tableLayout(this.dimension);
    kernels.doubles.set(query);
    const [f64, f32] = [Float64Array.BYTES_PER_ELEMENT, Float32Array.BYTES_PER_ELEMENT];
    for (let part = 0; part < this.parts; part++) {
      kernels.floatDots(part * d * f64, codebooksAt + part * CENTROIDS * d * f32, CENTROIDS, d, similaritiesAt + part * CENTROIDS * f64);
    }
    const values = kernels.doubles;
    const first = similaritiesAt / f64;
    const lowest = new Float64Array(this.parts);
    let widest = 0;
    for (let part = 0; part < this.parts; part++) {
      let low = Infinity;
      let high = -Infinity;
      for (let i = first + part * CENTROIDS; i < first + (part + 1) * CENTROIDS; i++) {
        const value = values[i];
        if (value < low) low = value;
        if (value > high) high = value;
      }
      lowest[part] = low;
      widest = Math.max(widest, high - low);
    }
    const top = Math.min(255, Math.floor(0xffff / this.parts));
    const perStep = widest > 0 ? top / widest : 0;
    const table = new Uint8Array(this.parts * CENTROIDS);
    for (let part = 0; part < this.parts; part++) {
      const low = lowest[part];
      for (let i = part * CENTROIDS; i < (part + 1) * CENTROIDS; i++) table[i] = roundNonNegative((values[first + i] - low) * perStep);
    }
    return table;
  }

  private tableKernels(): Kernels {
    if (this.kernels) return this.kernels;
    const kernels = new Kernels();
    const { codebooksAt, bytes } = tableLayout(this.dimension);
    kernels.reserve(bytes);
    kernels.floats.set(this.codebooks, codebooksAt / Float32Array.BYTES_PER_ELEMENT);
    return (this.kernels = kernels);
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

function subDimensionOf(dimension: number): number {
  return [SUB_DIMENSION, 4, 2, 1].find((size) => dimension % size === 0)!;
}

/** The tables' kernel memory: the query (f64) at 0, then its similarities (f64), then the codebooks (f32). */
function tableLayout(dimension: number): { similaritiesAt: number; codebooksAt: number; bytes: number } {
  const similaritiesAt = dimension * Float64Array.BYTES_PER_ELEMENT;
  const codebooksAt = similaritiesAt + (dimension / subDimensionOf(dimension)) * CENTROIDS * Float64Array.BYTES_PER_ELEMENT;
  return { similaritiesAt, codebooksAt, bytes: codebooksAt + dimension * CENTROIDS * Float32Array.BYTES_PER_ELEMENT };
}

/** The kernel memory a search thread holds for the lookup tables of a segment's quantizer. */
export function lookupTableBytes(dimension: number): number {
  return tableLayout(dimension).bytes;
}

/**
 * Math.round(x) for 0 <= x < 2^31, seven times faster here (4,096 values a table: 50 -> 7 µs). x + 0.5
 * truncated is one too many only where the addition rounded up to the next integer (x = 0.49999999999999994);
 * rounded - 0.5 is exact, so the comparison catches it.
 */
function roundNonNegative(x: number): number {
  const rounded = (x + 0.5) | 0;
  return rounded - 0.5 > x ? rounded - 1 : rounded;
}
