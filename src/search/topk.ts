// The k best (id, score) pairs of a stream, kept in a min-heap: O(n log k) instead of sorting everything.
// Typed arrays and hole-based sifting: pushes are on the hot path of every search.

export interface Scored {
  id: number;
  score: number;
}

export class TopK {
  /** Grown by doubling up to k, so a large k costs nothing until that many pairs arrive. */
  private ids: Float64Array;
  private scores: Float64Array;
  private size = 0;

  constructor(readonly k: number) {
    const capacity = Math.max(0, Math.min(Math.ceil(k), 1024));
    this.ids = new Float64Array(capacity);
    this.scores = new Float64Array(capacity);
  }

  /** How many pairs it holds (at most k). */
  get length(): number {
    return this.size;
  }

  /** The score a newcomer must beat once the heap is full. */
  get threshold(): number {
    return this.size < this.k ? -Infinity : this.scores[0];
  }

  push(id: number, score: number): void {
    if (this.size < this.k) {
      if (this.size === this.ids.length) this.grow();
      this.siftUp(this.size++, id, score);
    } else if (this.size > 0 && score > this.scores[0]) this.siftDown(id, score);
  }

  private grow(): void {
    const capacity = Math.min(Math.ceil(this.k), this.ids.length * 2);
    const ids = new Float64Array(capacity);
    ids.set(this.ids);
    this.ids = ids;
    const scores = new Float64Array(capacity);
    scores.set(this.scores);
    this.scores = scores;
  }

  /** The ids held, in no particular order (the same order for the same pushes). */
  heldIds(): Float64Array {
    return this.ids.slice(0, this.size);
  }

  /** Best first; ties keep the smaller id first so results are deterministic. */
  sorted(): Scored[] {
    return Array.from({ length: this.size }, (_, i) => ({ id: this.ids[i], score: this.scores[i] })).sort(
      (a, b) => b.score - a.score || a.id - b.id,
    );
  }

  /** Places (id, score) at the hole `i`, moving larger parents down. */
  private siftUp(i: number, id: number, score: number): void {
    const { ids, scores } = this;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (scores[parent] <= score) break;
      ids[i] = ids[parent];
      scores[i] = scores[parent];
      i = parent;
    }
    ids[i] = id;
    scores[i] = score;
  }

  /** Replaces the root by (id, score), moving smaller children up. */
  private siftDown(id: number, score: number): void {
    const { ids, scores, size } = this;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) break;
      const right = left + 1;
      const child = right < size && scores[right] < scores[left] ? right : left;
      if (scores[child] >= score) break;
      ids[i] = ids[child];
      scores[i] = scores[child];
      i = child;
    }
    ids[i] = id;
    scores[i] = score;
  }
}
