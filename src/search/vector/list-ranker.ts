// Ranking a segment's lists (vector/ivf.ts) for a query: its similarity to every list centroid, by the
// WebAssembly kernel (bit for bit dot()), on a copy of the centroids kept in the ranker's own kernel
// memory. At 1M chunks (1,000 lists of 512-d) the similarities take 0.17 ms against 0.44 ms in JavaScript.
import { Kernels } from "../kernels/kernels.ts";

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

  /**
   * The lists ordered by their centroids' similarity to the query, nearest first (ties: lower list first).
   * Searches stop after a tenth or so of the lists: the nearest `expected` (and any tied with the last of
   * them) are sorted first, the rest only if the caller reads past them (at 1M chunks, 1,000 lists:
   * sorting them all took 0.18 ms a search).
   */
  *rank(query: Float32Array, expected: number): Generator<number> {
    const { kernels, lists } = this;
    kernels.doubles.set(query);
    kernels.floatDots(0, this.centroidsAt, lists, this.dimension, this.scoresAt);
    const first = this.scoresAt / Float64Array.BYTES_PER_ELEMENT;
    const scores = kernels.doubles.slice(first, first + lists);
    const nearestFirst = (x: number, y: number) => scores[y] - scores[x] || x - y;
    const bound = expected < lists ? kthLargest(scores.slice(), expected) : -Infinity;
    const near: number[] = [];
    const far: number[] = [];
    for (let list = 0; list < lists; list++) (scores[list] >= bound ? near : far).push(list);
    yield* near.sort(nearestFirst);
    yield* far.sort(nearestFirst);
  }
}

/** The k-th largest of `values` (1-based; values is reordered), by quickselect. */
function kthLargest(values: Float64Array, k: number): number {
  let low = 0;
  let high = values.length - 1;
  const target = k - 1;
  while (low < high) {
    const pivot = values[(low + high) >>> 1];
    let i = low;
    let j = high;
    while (i <= j) {
      while (values[i] > pivot) i++;
      while (values[j] < pivot) j--;
      if (i <= j) {
        [values[i], values[j]] = [values[j], values[i]];
        i++;
        j--;
      }
    }
    if (target <= j) high = j;
    else if (target >= i) low = i;
    else return values[target];
  }
  return values[target];
}
