// The k best (id, score) pairs of a stream, kept in a min-heap: O(n log k) instead of sorting everything.

export interface Scored {
  id: number;
  score: number;
}

export class TopK {
  private readonly ids: number[] = [];
  private readonly scores: number[] = [];

  constructor(readonly k: number) {}

  /** The score a newcomer must beat once the heap is full. */
  get threshold(): number {
    return this.ids.length < this.k ? -Infinity : this.scores[0];
  }

  push(id: number, score: number): void {
    if (this.k <= 0) return;
    if (this.ids.length < this.k) {
      this.ids.push(id);
      this.scores.push(score);
      this.siftUp(this.ids.length - 1);
    } else if (score > this.scores[0]) {
      this.ids[0] = id;
      this.scores[0] = score;
      this.siftDown(0);
    }
  }

  /** Best first; ties keep the smaller id first so results are deterministic. */
  sorted(): Scored[] {
    return this.ids
      .map((id, i) => ({ id, score: this.scores[i] }))
      .sort((a, b) => b.score - a.score || a.id - b.id);
  }

  private swap(a: number, b: number): void {
    [this.ids[a], this.ids[b]] = [this.ids[b], this.ids[a]];
    [this.scores[a], this.scores[b]] = [this.scores[b], this.scores[a]];
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.scores[parent] <= this.scores[i]) return;
      this.swap(parent, i);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const n = this.ids.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < n && this.scores[left] < this.scores[smallest]) smallest = left;
      if (right < n && this.scores[right] < this.scores[smallest]) smallest = right;
      if (smallest === i) return;
      this.swap(smallest, i);
      i = smallest;
    }
  }
}
