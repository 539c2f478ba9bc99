// Ranking a segment's lists (vector/ivf.ts) for a query: its similarity to every list centroid, by the
// WebAssembly kernel (bit for bit dot()), on a copy of the centroids kept in the ranker's own kernel
// memory. At 1M chunks (1,000 lists of 512-d) the similarities take 0.17 ms against
// 0.44 ms in JavaScript, and ranking them all 0.35 against 0.60 ms.
import { Kernels } from "./kernels.ts";

export class ListRanker {
  private readonly kernels = new Kernels();
  private readonly lists: number;
  private readonly scoresAt: number;
  private readonly centroidsAt: number;

  /** `centroids`: lists × dimension unit vectors. */
  constructor(
    centroids: Float32Array,
    private readonly dimension: number,
  ) {
    this.lists = centroids.length / dimension;
    // The query (f64) at 0, then the scores (f64), then the centroids (f32).
    this.scoresAt = dimension * Float64Array.BYTES_PER_ELEMENT;
    this.centroidsAt = this.scoresAt + this.lists * Float64Array.BYTES_PER_ELEMENT;
    this.kernels.reserve(this.centroidsAt + centroids.byteLength);
    this.kernels.floats.set(centroids, this.centroidsAt / Float32Array.BYTES_PER_ELEMENT);
  }

  /** The lists ordered by their centroids' similarity to the query, nearest first (ties: lower list first). */
  rank(query: Float32Array): Int32Array {
    const { kernels, lists } = this;
    kernels.doubles.set(query);
    kernels.floatDots(0, this.centroidsAt, lists, this.dimension, this.scoresAt);
    const first = this.scoresAt / Float64Array.BYTES_PER_ELEMENT;
    const scores = kernels.doubles.subarray(first, first + lists);
    return Int32Array.from({ length: lists }, (_, i) => i).sort((x, y) => scores[y] - scores[x] || x - y);
  }
}
