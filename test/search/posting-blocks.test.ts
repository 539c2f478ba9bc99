// The keyword segment's posting blocks (segment-format.ts) read back exactly as written, at every bit
// width the format allows in practice: slot gaps up to 22 bits, tfs up to the 65,535 cap, blocks of
// consecutive slots (0-bit gaps) and of tf 1 only (no tf words), short last blocks; and a cursor that
// skips to arbitrary targets lands on the right posting.
import { expect, test } from "bun:test";
import { PostingEncoder } from "../../src/search/keyword/posting-encoder.ts";
import { EXHAUSTED, PostingCursor, type PostingSource } from "../../src/search/keyword/posting-cursor.ts";
import { MAX_TF } from "../../src/search/keyword/segment-format.ts";
import { MAX_WINDOW, scoreWindowMemory } from "../../src/search/keyword/score-window.ts";
import { uniform } from "../../scripts/seeded-random.ts";

const SLOTS = 1 << 22;
const random = uniform(10);

interface Term {
  slots: number[];
  tfs: number[];
}

/** Postings with gaps drawn up to `maxGap` and tfs from `tf()`. */
function term(count: number, maxGap: number, tf: () => number): Term {
  const slots: number[] = [];
  const tfs: number[] = [];
  let slot = -1;
  for (let i = 0; i < count; i++) {
    slot += 1 + Math.floor(random() * maxGap);
    if (slot >= SLOTS) break;
    slots.push(slot);
    tfs.push(tf());
  }
  return { slots, tfs };
}

const terms: Term[] = [
  term(1, 1, () => 1),
  term(1, SLOTS, () => 70_000),
  term(300, 1, () => 1),
  term(1000, 1, () => 1 + Math.floor(random() * 3)),
  term(1000, 40, () => (random() < 0.9 ? 1 : 2 + Math.floor(random() * 20))),
  term(5000, 800, () => 1 + Math.floor(random() * MAX_TF)),
  term(200, 20_000, () => 1),
  { slots: [0, SLOTS - 1], tfs: [MAX_TF, 1] },
  term(129, 3_000_000, () => 1 + Math.floor(random() * 300)),
  // Dense enough for whole blocks inside one window of the dense sum: 16-bit tfs, 7-bit gaps.
  term(3000, 4, () => 1 + Math.floor(random() * MAX_TF)),
  term(2000, 100, () => 1 + Math.floor(random() * 300)),
];

function encode(): PostingSource {
  const chunks: Uint8Array[] = [];
  const encoder = new PostingEncoder(new Uint32Array(SLOTS).fill(90), (bytes) => chunks.push(bytes.slice()));
  const termBlocks = new Uint32Array(terms.length + 1);
  const termDf = new Uint32Array(terms.length);
  terms.forEach(({ slots, tfs }, t) => {
    encoder.startTerm();
    termBlocks[t] = encoder.blockLast.length;
    slots.forEach((slot, i) => encoder.add(slot, tfs[i]));
    termDf[t] = slots.length;
  });
  encoder.finish();
  termBlocks[terms.length] = encoder.blockLast.length;
  const bytes = new Uint8Array(encoder.bytesWritten);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  expect(bytes.length % 4).toBe(0);
  return {
    postingWords: new Int32Array(bytes.buffer),
    termBlocks,
    termDf,
    blockLast: encoder.blockLast.toArray().slice(),
    blockOffset: encoder.blockOffset.toArray().slice(),
  };
}

const source = encode();

test("every term's postings decode to the slots and tfs written (tfs capped at 65,535)", () => {
  terms.forEach(({ slots, tfs }, t) => {
    const cursor = new PostingCursor(source, t);
    const read: number[] = [];
    const readTfs: number[] = [];
    while (cursor.slot !== EXHAUSTED) {
      read.push(cursor.slot);
      readTfs.push(cursor.tf);
      cursor.advance(cursor.slot + 1);
    }
    expect(read).toEqual(slots);
    expect(readTfs).toEqual(tfs.map((tf) => Math.min(tf, MAX_TF)));
  });
});

test("a cursor advanced to random targets stops at the first posting at or after each", () => {
  terms.forEach(({ slots, tfs }, t) => {
    const cursor = new PostingCursor(source, t);
    let target = 0;
    for (;;) {
      target += Math.floor(random() * 2 * (SLOTS / Math.max(1, slots.length)));
      cursor.advance(target);
      const expected = slots.findIndex((slot) => slot >= target);
      if (expected < 0) {
        expect(cursor.slot).toBe(EXHAUSTED);
        break;
      }
      expect(cursor.slot).toBe(slots[expected]);
      expect(cursor.tf).toBe(Math.min(tfs[expected], MAX_TF));
      target = cursor.slot;
    }
  });
});

test("summing windows (the dense sum) adds each posting's contribution to its slot exactly, whole blocks in the kernel", () => {
  const window = scoreWindowMemory();
  window.lengths = Uint32Array.from({ length: SLOTS }, (_, slot) => 50 + (slot % 97));
  window.normBase = 0.25;
  window.normPerTerm = 0.75 / 93;
  const factor = 2.5;
  terms.forEach(({ slots, tfs }, t) => {
    const cursor = new PostingCursor(source, t);
    let next = 0;
    while (cursor.slot !== EXHAUSTED) {
      const low = cursor.slot;
      const high = Math.min(low + MAX_WINDOW, SLOTS);
      window.moveWindow(low, high);
      cursor.sum(high, factor, window);
      for (; next < slots.length && slots[next] < high; next++) {
        const tf = Math.min(tfs[next], MAX_TF);
        const expected = (factor * tf) / (tf + (window.normBase + window.normPerTerm * window.lengths[slots[next]]));
        expect(window.scores[slots[next] - low]).toBe(expected);
        window.scores[slots[next] - low] = 0;
      }
      expect(window.scores.subarray(0, high - low).every((score) => score === 0)).toBe(true);
      expect(cursor.slot).toBe(next < slots.length ? slots[next] : EXHAUSTED);
    }
    expect(next).toBe(slots.length);
  });
});

test("under a filter, MaxScore's accumulation adds only eligible chunks' postings and notes their offsets", () => {
  const t = 4;
  const { slots, tfs } = terms[t];
  const low = slots[100];
  const high = slots[700];
  // Rowids are the slots shifted by 1,000; every third slot's chunk is eligible.
  const rowids = Uint32Array.from({ length: SLOTS }, (_, slot) => slot + 1000);
  const eligible = new Uint8Array(SLOTS + 1000).map((_, rowid) => (rowid >= 1000 && (rowid - 1000) % 3 === 0 ? 1 : 0));
  const lengths = new Uint32Array(SLOTS).fill(90);
  const cursor = new PostingCursor(source, t);
  cursor.advance(low);
  const scores = new Float64Array(high - low);
  const touched = new Int32Array(high - low);
  const touchedCount = cursor.accumulate(high, 2, { low, lengths, normBase: 0.5, normPerTerm: 0.01, scores, eligible, rowids }, touched, 0);
  for (let i = 100; i < 700; i++) {
    const expected = slots[i] % 3 === 0 ? (2 * tfs[i]) / (tfs[i] + 0.5 + 0.01 * 90) : 0;
    expect(scores[slots[i] - low]).toBeCloseTo(expected, 12);
  }
  const offsets = [...touched.subarray(0, touchedCount)].sort((a, b) => a - b);
  expect(offsets).toEqual(slots.slice(100, 700).filter((slot) => slot % 3 === 0).map((slot) => slot - low));
  expect(cursor.slot).toBe(high);
});
