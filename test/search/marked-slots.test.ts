// The slots an eligibility mask marks come out as the runs of consecutive marked slots, in order, whether
// the mask is walked (dense rowids) or the slots are checked one by one (sparse rowids), for any range.
import { expect, test } from "bun:test";
import { MarkedSlots } from "../../src/search/marked-slots.ts";
import { uniform } from "../../scripts/seeded-random.ts";

const random = uniform(7);

/** Runs of consecutive slots in [from, to) whose rowid the mask marks, checked one by one. */
function expectedRuns(rowids: Int32Array, eligible: Uint8Array, from: number, to: number): [number, number][] {
  const runs: [number, number][] = [];
  for (let slot = from; slot < to; slot++) {
    if (eligible[rowids[slot]] !== 1) continue;
    const last = runs.at(-1);
    if (last && last[1] === slot) last[1]++;
    else runs.push([slot, slot + 1]);
  }
  return runs;
}

for (const [name, maxGap] of [["dense", 2], ["sparse", 12]] as const) {
  test(`${name} rowids: every run of marked slots, at any share and range`, () => {
    const rowids = new Int32Array(5000);
    let rowid = 1 + Math.floor(random() * 5);
    for (let slot = 0; slot < rowids.length; slot++) rowids[slot] = rowid += 1 + Math.floor(random() * maxGap);
    for (const share of [0, 0.01, 0.3, 1]) {
      const eligible = new Uint8Array(new SharedArrayBuffer(rowids[rowids.length - 1] + 1));
      // Whole documents of 1-20 consecutive rowids, as a filter on document metadata marks them.
      for (let at = 0; at < eligible.length; ) {
        const length = 1 + Math.floor(random() * 20);
        if (random() < share) eligible.fill(1, at, at + length);
        at += length;
      }
      const marked = new MarkedSlots(rowids, eligible);
      for (const [from, to] of [[0, rowids.length], [1, 2], [17, 4000], [4999, 5000], [300, 300]]) {
        const runs: [number, number][] = [];
        marked.forEachRun(from, to, (start, end) => runs.push([start, end]));
        expect(runs).toEqual(expectedRuns(rowids, eligible, from, to));
      }
    }
  });
}
