// The segment builder's bounded memory: (term id, slot, tf) postings are gathered for a run of chunks,
// sorted by term with a counting sort and spilled to a temporary file; the writer then reads each term's
// postings back run by run (runs cover ascending slots, so concatenating them keeps slot order). Runs
// are read back with pread rather than mapped: mapped pages count towards the RSS of the server the
// builder runs in once touched (~360 MB of runs at 1M chunks), while the page cache can drop them.
import { closeSync, openSync, readSync, rmSync, writeSync } from "node:fs";

/** Postings held in memory before a run is spilled: 8M postings ≈ 80 MB, twice that while sorting. */
const RUN_POSTINGS = 8 * 1024 * 1024;

interface SpilledRun {
  path: string;
  /** Open for reading back. */
  fd: number;
  /** starts[id] … starts[id + 1] index term id's postings in the file's slots and tfs; ids ≥ starts.length − 1 have none. */
  starts: Uint32Array;
  /** Byte offsets of the file's Uint32 slots and Uint16 tfs. */
  slotsAt: number;
  tfsAt: number;
}

export class PostingRuns {
  private termIds: Uint32Array;
  private slots: Uint32Array;
  private tfs: Uint16Array;
  private count = 0;
  private readonly runs: SpilledRun[] = [];
  /** Read buffers for one term's postings of one run, grown as needed. */
  private readSlots = new Uint32Array(1024);
  private readTfs = new Uint16Array(1024);

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
      const first = run.starts[termId];
      const count = run.starts[termId + 1] - first;
      if (count === 0) continue;
      if (count > this.readSlots.length) {
        this.readSlots = new Uint32Array(count);
        this.readTfs = new Uint16Array(count);
      }
      const { readSlots: slots, readTfs: tfs } = this;
      readSync(run.fd, slots, 0, count * 4, run.slotsAt + first * 4);
      readSync(run.fd, tfs, 0, count * 2, run.tfsAt + first * 2);
      for (let i = 0; i < count; i++) visit(slots[i], tfs[i]);
    }
  }

  removeFiles(): void {
    for (const run of this.runs) {
      closeSync(run.fd);
      rmSync(run.path, { force: true });
    }
    this.runs.length = 0;
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
    this.runs.push({ path, fd: openSync(path, "r"), starts, slotsAt: starts.byteLength, tfsAt: starts.byteLength + slots.byteLength });
    this.count = 0;
  }
}
