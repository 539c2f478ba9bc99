// The on-disk keyword segment against the in-memory index on the same chunks: identical statistics, and
// for many real queries the same top k with the same scores (to 1e-9; chunks tied at the cut may differ),
// with and without an eligibility mask — so MaxScore pruning and block skipping lose nothing. Also: a
// segment plus an in-memory delta under combined statistics rank like one index over all chunks, and
// removing chunks from the in-memory index leaves what a build without them gives.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeywordIndex, KeywordSegment, queryTermWeights, writeKeywordSegment, type KeywordHit, type KeywordStats } from "../../src/search/keyword/index.ts";
import { loadCollection } from "../../scripts/bench/eval-collections.ts";
import { uniform } from "../../scripts/seeded-random.ts";
import { mergeHits } from "../../src/search/rowid-hit.ts";

const root = mkdtempSync(join(tmpdir(), "quarry-keyword-segment-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** ~90-word windows of the cran collection, rowids with gaps, plus a few edge cases. */
function chunks(): { rowid: number; text: string }[] {
  const texts: string[] = [];
  for (const doc of loadCollection("cran").corpus) {
    const words = doc.text.split(/\s+/).filter(Boolean);
    for (let start = 0; start < words.length; start += 90) texts.push(words.slice(start, start + 90).join(" "));
  }
  texts.push("flow ".repeat(300) + "boundary layer", "東京の空気力学 résumé naïve", "", "the of and");
  return texts.map((text, i) => ({ rowid: 5 + 3 * i + (i % 3), text }));
}

const all = chunks();
const queries = loadCollection("cran").queries.map((q) => q.text).concat(["flow flow flow", "空気", "resume", "zzzunknown"]);

function mask(fraction: number, seed: number): Uint8Array {
  const random = uniform(seed);
  const eligible = new Uint8Array(all.at(-1)!.rowid + 1);
  for (const { rowid } of all) eligible[rowid] = random() < fraction ? 1 : 0;
  return eligible;
}

/** The share of the chunks a mask admits (a 1 % mask has the dense sum walk it, dense-sum.ts). */
function shareOf(eligible: Uint8Array | null): number {
  return eligible ? all.filter(({ rowid }) => eligible[rowid] === 1).length / all.length : 1;
}

/** Same length, same scores to 1e-9, and where rowids differ, both score the same (a tie). */
function expectSameHits(actual: KeywordHit[], expected: KeywordHit[], reference: Map<number, number>): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((hit, i) => {
    expect(Math.abs(hit.score - expected[i].score)).toBeLessThan(1e-9);
    if (hit.rowid !== expected[i].rowid) expect(Math.abs(reference.get(hit.rowid)! - expected[i].score)).toBeLessThan(1e-9);
  });
  expect(new Set(actual.map((hit) => hit.rowid)).size).toBe(actual.length);
}

function memoryIndex(list: { rowid: number; text: string }[]): KeywordIndex {
  const index = new KeywordIndex();
  for (const chunk of list) index.add(chunk.rowid, chunk.text);
  return index;
}

// A small run size forces the builder through several spilled runs and their merge.
const dir = join(root, "full");
const written = writeKeywordSegment(dir, all, { runPostings: 10_000 });
const segment = KeywordSegment.open(dir);
const memory = memoryIndex(all);

test("the segment holds the chunks' statistics and removes its temporary files", () => {
  expect(written.chunkCount).toBe(all.length);
  expect(readdirSync(dir)).toEqual(["keyword.seg"]);
  expect(segment.chunkCount).toBe(memory.chunkCount);
  expect(segment.totalLength).toBe(memory.totalLength);
  expect([...segment.rowids]).toEqual(all.map((chunk) => chunk.rowid));
  for (const term of ["flow", "boundari", "layer", "東京", "resum", "naiv", "zzz", ""]) {
    expect(segment.documentFrequency(term)).toBe(memory.documentFrequency(term));
  }
  expect(segment.documentFrequency("flow")).toBeGreaterThan(100);
});

test("both search strategies, and the plan that picks between them, return the exact top k, with and without an eligibility mask", () => {
  const masks = [null, mask(0.3, 1), mask(0.01, 2)];
  let compared = 0;
  for (const query of queries) {
    const weights = queryTermWeights(query);
    for (const eligible of masks) {
      const reference = new Map(memory.search(weights, memory, eligible, all.length).map((hit) => [hit.rowid, hit.score]));
      for (const limit of [1, 10, 100]) {
        const expected = memory.search(weights, memory, eligible, limit);
        for (const strategy of ["auto", "max-score", "dense-sum"] as const) {
          expectSameHits(segment.search(weights, memory, eligible, limit, { strategy, eligibleShare: shareOf(eligible) }), expected, reference);
        }
        compared += expected.length;
      }
    }
  }
  expect(compared).toBeGreaterThan(50_000);
}, 60_000);

test("its shards together find what the whole segment finds (the search threads split each search)", () => {
  const masks = [null, mask(0.01, 3)];
  let compared = 0;
  for (const query of queries) {
    const weights = queryTermWeights(query);
    for (const eligible of masks) {
      const reference = new Map(memory.search(weights, memory, eligible, all.length).map((hit) => [hit.rowid, hit.score]));
      for (const count of [2, 3]) {
        const shards = Array.from({ length: count }, (_, index) => segment.search(weights, memory, eligible, 10, { shard: { index, count } }));
        const whole = segment.search(weights, memory, eligible, 10);
        expectSameHits(mergeHits(shards, 10), whole, reference);
        compared += whole.length;
      }
    }
  }
  expect(compared).toBeGreaterThan(4_000);
});

test("a segment plus an in-memory delta, under combined statistics, rank like one index over all chunks", () => {
  const split = Math.floor(all.length * 0.8);
  const partDir = join(root, "part");
  writeKeywordSegment(partDir, all.slice(0, split));
  const part = KeywordSegment.open(partDir);
  const delta = memoryIndex(all.slice(split));
  const stats: KeywordStats = {
    chunkCount: part.chunkCount + delta.chunkCount,
    averageLength: (part.totalLength + delta.totalLength) / (part.chunkCount + delta.chunkCount),
    documentFrequency: (term) => part.documentFrequency(term) + delta.documentFrequency(term),
  };
  for (const query of queries.slice(0, 60)) {
    const weights = queryTermWeights(query);
    const reference = new Map(memory.search(weights, memory, null, all.length).map((hit) => [hit.rowid, hit.score]));
    const merged = [...part.search(weights, stats, null, 20), ...delta.search(weights, stats, null, 20)]
      .sort((a, b) => b.score - a.score || a.rowid - b.rowid)
      .slice(0, 20);
    expectSameHits(merged, memory.search(weights, memory, null, 20), reference);
  }
});

test("removing chunks from the in-memory index gives what a build without them gives", () => {
  const list = all.slice(0, 600);
  const dropped = (i: number) => i % 4 === 1;
  const full = memoryIndex(list);
  list.forEach((chunk, i) => dropped(i) && full.remove(chunk.rowid));
  full.remove(999_999);
  const fresh = memoryIndex(list.filter((_, i) => !dropped(i)));
  expect(full.chunkCount).toBe(fresh.chunkCount);
  expect(full.totalLength).toBe(fresh.totalLength);
  for (const query of queries.slice(0, 40)) {
    const weights = queryTermWeights(query);
    expect(full.search(weights, full, null, 20)).toEqual(fresh.search(weights, fresh, null, 20));
  }
  // A removed rowid can come back (a re-added chunk), in the same index.
  full.add(list[1].rowid, list[1].text);
  expect(full.chunkCount).toBe(fresh.chunkCount + 1);
  expect(full.search(queryTermWeights(list[1].text), full, null, 1)[0].rowid).toBe(list[1].rowid);
});

test("an empty segment opens and finds nothing; chunks out of rowid order are refused", () => {
  const emptyDir = join(root, "empty");
  writeKeywordSegment(emptyDir, []);
  const empty = KeywordSegment.open(emptyDir);
  expect(empty.chunkCount).toBe(0);
  expect(empty.search(queryTermWeights("flow"), memory, null, 10)).toEqual([]);
  expect(() => writeKeywordSegment(join(root, "unordered"), [{ rowid: 2, text: "a" }, { rowid: 1, text: "b" }])).toThrow("ascending rowid");
});
