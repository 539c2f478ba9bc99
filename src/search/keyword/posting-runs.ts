// The segment builder's bounded memory: (term id, slot, tf) postings are gathered for a run of chunks,
// sorted by term with a counting sort and spilled to a temporary file; the writer then reads each term's
// postings back run by run (runs cover ascending slots, so concatenating them keeps slot order).
import { closeSync, openSync, rmSync, writeSync } from "node:fs";

/** Postings held in memory before a run is spilled: 8M postings ≈ 80 MB, twice that while sorting. */
const RUN_POSTINGS = 8 * 1024 * 1024;

interface SpilledRun {
  path: string;
  /** starts[id] … starts[id + 1] index term id's postings in slots/tfs; ids ≥ starts.length − 1 have none. */
  starts: Uint32Array;
  slots: Uint32Array;
  tfs: Uint16Array;
}

export class PostingRuns {
  private termIds: Uint32Array;
  private slots: Uint32Array;
  private tfs: Uint16Array;
  private count = 0;
  private readonly runs: SpilledRun[] = [];

  constructor(
    private readonly pathPrefix: string,
    private readonly vocabularySize: () => number,
    private readonly runPostings = RUN_POSTINGS,
  ) {
    this.termIds = new Uint32Array(runPostings);
    this.slots = new Uint32Array(runPostings);
    this.tfs = new Uint16Array(runPostings);
  }

  add(termId: number, slot: number, tf: number): void {
    if (this.count === this.runPostings) this.spill();
    this.termIds[this.count] = termId;
    this.slots[this.count] = slot;
    this.tfs[this.count] = tf;
    this.count++;
  }

  /** Spills what is left; afterwards `forEachPosting` may be called. */
  finish(): void {
    if (this.count > 0) this.spill();
    this.termIds = this.slots = new Uint32Array(0);
    this.tfs = new Uint16Array(0);
  }

  /** Calls `visit` for each of a term's postings, by ascending slot. */
  forEachPosting(termId: number, visit: (slot: number, tf: number) => void): void {
    for (const run of this.runs) {
      if (termId + 1 >= run.starts.length) continue;
      for (let i = run.starts[termId]; i < run.starts[termId + 1]; i++) visit(run.slots[i], run.tfs[i]);
    }
  }

  removeFiles(): void {
    for (const run of this.runs) rmSync(run.path, { force: true });
  }

  private spill(): void {
    const terms = this.vocabularySize();
    const starts = new Uint32Array(terms + 1);
    for (let i = 0; i < this.count; i++) starts[this.termIds[i] + 1]++;
    for (let t = 0; t < terms; t++) starts[t + 1] += starts[t];
    const next = starts.slice(0, terms);
    const slots = new Uint32Array(this.count);
    const tfs = new Uint16Array(this.count);
    for (let i = 0; i < this.count; i++) {
      const at = next[this.termIds[i]]++;
      slots[at] = this.slots[i];
      tfs[at] = this.tfs[i];
    }
    const path = `${this.pathPrefix}.run${this.runs.length}.tmp`;
    const fd = openSync(path, "w");
    try {
      for (const array of [starts, slots, tfs]) writeSync(fd, new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
    } finally {
      closeSync(fd);
    }
    // Map the spilled run back: its pages can be dropped by the kernel under memory pressure.
    const mapped = Bun.mmap(path);
    const at = (bytes: number) => mapped.byteOffset + bytes;
    this.runs.push({
      path,
      starts: new Uint32Array(mapped.buffer, at(0), terms + 1),
      slots: new Uint32Array(mapped.buffer, at(starts.byteLength), this.count),
      tfs: new Uint16Array(mapped.buffer, at(starts.byteLength + slots.byteLength), this.count),
    });
    this.count = 0;
  }
}
