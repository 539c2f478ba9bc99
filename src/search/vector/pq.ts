// Product quantization of the vectors of a segment's lists (vector/ivf.ts): each vector is cut into
// sub-vectors ("parts") of SUB_DIMENSION values and each part replaced by the index of the nearest of
// PQ_CENTROIDS centroids trained for its position: four bits, two parts a byte, so a 512-d vector is 64
// bytes. A query's similarity to every centroid is tabled once, in bytes; a vector's approximate score is
// then one table lookup per part, 16 vectors at a time in WebAssembly (pq-scan.ts, pq-blocks.ts). Searches
// rank by this and re-score the best thousand or so on the 8-bit codes (code-scan.ts).
//
// Format 4 had 64 centroids of 8-d parts, a byte each: as many bytes, fewer bits used. On the 1M-chunk
// bench segment (near-real vectors, 200 real queries, recall@10 against scoring every 8-bit code, the best
// 1,000 a shard re-scored), visiting 5 / 7 / 10 % of the segment: recall 0.954 / 0.963 / 0.960 -> 0.969 /
// 0.981 / 0.983. With a 16-entry table a lookup is one byte shuffle instead of four, and four parts'
// bytes add without widening (tables in steps of 1/63 of the widest part's range ranked as well as
// unrounded ones in a prototype): the kernel scores 100k codes in 0.54 ms instead of 0.65-0.67. Encoding
// costs a quarter of the multiply-adds.
import { Kernels } from "../kernels/kernels.ts";
import { halfSquaredNorms, kMeans, nearest } from "./k-means.ts";

/** Values per part, when the dimension allows (else the largest of 2, 1 that divides it). */
const SUB_DIMENSION = 4;
/** Centroids per part: a part's code is four bits. */
export const PQ_CENTROIDS = 16;
const CENTROIDS = PQ_CENTROIDS;
/** The kernel adds four parts' table bytes in 8 bits (kernels.wat pqBlockScores): each at most 63. */
const TABLE_TOP = 63;
const TRAIN_ROUNDS = 10;
/** Vectors encoded per pass over the parts. */
const ENCODE_BATCH = 4096;

export class ProductQuantizer {
  readonly subDimension: number;
  /** Sub-vectors per vector. */
  readonly parts: number;
  /**
   * Bytes of one vector's code: two parts a byte, in whole steps of the kernel (four parts). Parts past
   * `parts` are padding: code 0, whose table bytes are 0.
   */
  readonly codeBytes: number;
  /** A copy of the codebooks in a kernel instance's memory, for the tables (made at the first). */
  private kernels: Kernels | null = null;

  /** `codebooks`: parts × CENTROIDS × subDimension centroid values. */
  constructor(
    readonly dimension: number,
    readonly codebooks: Float32Array,
  ) {
    this.subDimension = subDimensionOf(dimension);
    this.parts = dimension / this.subDimension;
    this.codeBytes = codeBytesOf(this.parts);
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

  /** The codes of `vectors` (n × dimension): codeBytes per vector, part p in byte p / 2 (even parts in the low four bits). */
  encode(vectors: Float32Array): Uint8Array {
    const n = vectors.length / this.dimension;
    const { codeBytes } = this;
    const codes = new Uint8Array(n * codeBytes);
    const d = this.subDimension;
    for (let start = 0; start < n; start += ENCODE_BATCH) {
      const batch = vectors.subarray(start * this.dimension, Math.min(n, start + ENCODE_BATCH) * this.dimension);
      for (let part = 0; part < this.parts; part++) {
        const centroids = this.codebooks.subarray(part * CENTROIDS * d, (part + 1) * CENTROIDS * d);
        const halfNorms = halfSquaredNorms(centroids, d);
        const points = this.subVectors(batch, part);
        const [byte, shift] = [part >> 1, (part & 1) * 4];
        for (let v = 0; v < points.length / d; v++) codes[(start + v) * codeBytes + byte] |= nearest(centroids, halfNorms, 0, CENTROIDS, points, v * d, d) << shift;
      }
    }
    return codes;
  }

  /**
   * The query's similarity to every centroid of every part (2 × codeBytes × PQ_CENTROIDS, by part then
   * code; the padding parts' are 0), as bytes for the kernel: each part's values less the part's
   * smallest, in steps of the widest part's range / top, rounded. A vector's sum of its parts' bytes then
   * ranks it as the float sum would, up to half a step per part; `top` (TABLE_TOP, less past 1,040 parts)
   * keeps every sum within 16 bits.
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
    const top = Math.min(TABLE_TOP, Math.floor(0xffff / this.parts));
    const perStep = widest > 0 ? top / widest : 0;
    const table = new Uint8Array(2 * this.codeBytes * CENTROIDS);
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
  return [SUB_DIMENSION, 2, 1].find((size) => dimension % size === 0)!;
}

/** Bytes of a code of `parts` four-bit parts, padded to the kernel's step of four parts. */
function codeBytesOf(parts: number): number {
  return 2 * Math.ceil(parts / 4);
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
