// The on-disk vector segment on its own: written, reopened from its files, searched. Probing its lists
// agrees with exact cosine; filtered searches return min(limit, eligible) eligible hits at every
// selectivity and exactly the exact filtered top k when few chunks are eligible; an incremental build
// (base segment + changes) holds the same chunks, keeps the base's centroids and answers like a build
// from scratch.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VectorIndex } from "../../src/search/vector-index.ts";
import { blockedCode } from "../../src/search/vector/pq-blocks.ts";
import { VectorSegment } from "../../src/search/vector/segment.ts";
import { writeVectorSegment, type VectorRow } from "../../src/search/vector/segment-writer.ts";
import { exactTop, unitVectors } from "./vector-segment-data.ts";
import { uniform } from "../../scripts/seeded-random.ts";
import { mergeHits } from "../../src/search/rowid-hit.ts";
import { allShards } from "../../src/search/shard.ts";

const DIMENSION = 512;
const COUNT = 3000;
const root = mkdtempSync(join(tmpdir(), "quarry-vector-segment-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// Every third rowid, so that rowids are sparse as in a database with other knowledge bases.
const pool = unitVectors(COUNT + 40, DIMENSION, 1, 100);
const vectors = pool.slice(0, COUNT);
const queries = pool.slice(COUNT);
const rowids = vectors.map((_, i) => 3 * i + 2);
const rows = (ids: number[], vs: Float32Array[]): VectorRow[] => ids.map((rowid, i) => ({ rowid, vector: vs[i] }));

// 3,000 chunks would be one list (ivf.ts FLAT_BELOW); 24 lists make the searches probe, as at scale.
const LISTS = 24;
const fullDir = join(root, "full");
const fullBuild = writeVectorSegment(fullDir, rows(rowids, vectors), DIMENSION, undefined, { lists: LISTS });
/** Scores 10 % of the chunks, as a large segment scores its 2 %. */
const TUNING = { visitedShare: 0.1, minVisited: 0 };
const segment = VectorSegment.open(fullDir, DIMENSION, TUNING);
/** The same segment scoring as few chunks as it may, so that filtered searches probe list after list. */
const fewestVisited = VectorSegment.open(fullDir, DIMENSION, { visitedShare: 0, minVisited: 0 });
/** Exact scores on the same 8-bit codes (it scores every candidate below 4,096), keyed by rowid. */
const reference = new VectorIndex(DIMENSION);
vectors.forEach((vector, i) => reference.set(rowids[i], vector));
const referenceTop = (query: Float32Array, eligible: Uint8Array | null, limit: number) =>
  reference.search(query, eligible, limit).map((hit) => ({ rowid: hit.id, score: hit.score }));

function mask(fraction: number, seed: number): { eligible: Uint8Array; count: number } {
  const random = uniform(seed);
  const eligible = new Uint8Array(3 * COUNT + 2);
  let count = 0;
  for (const rowid of rowids) if (random() < fraction) (eligible[rowid] = 1), count++;
  return { eligible, count };
}

test("a reopened segment finds the exact top 10 (recall >= 0.95) with cosine scores", () => {
  expect(fullBuild).toEqual({ count: COUNT, lists: LISTS, trained: true });
  expect(segment.count).toBe(COUNT);
  expect(segment.lists).toBe(LISTS);
  let found = 0;
  for (const query of queries) {
    const hits = segment.search(query, null, COUNT, 10);
    expect(hits).toHaveLength(10);
    const exact = exactTop(vectors, rowids, query, 10);
    found += hits.filter((hit) => exact.includes(hit.rowid)).length;
    const top = vectors[rowids.indexOf(hits[0].rowid)];
    expect(Math.abs(hits[0].score - top.reduce((sum, x, i) => sum + x * query[i], 0))).toBeLessThan(0.01);
  }
  expect(found / (queries.length * 10)).toBeGreaterThanOrEqual(0.95);
});

test("its shards visit the same lists: merged, they find at least what the whole segment finds; in one pass, the same", () => {
  for (const [eligible, count] of [[null, COUNT], Object.values(mask(0.1, 5)), Object.values(mask(0.005, 6))] as [Uint8Array | null, number][]) {
    for (const query of queries) {
      const whole = segment.search(query, eligible, count, 10);
      const shards = allShards(2).map((shard) => segment.search(query, eligible, count, 10, [shard]));
      const merged = mergeHits(shards, 10);
      // One thread scoring both shards (a hybrid search's vector side on 2 cores, segment-searcher.ts).
      expect(segment.search(query, eligible, count, 10, allShards(2))).toEqual(merged);
      expect(segment.search(query, eligible, count, 10, allShards(3))).toEqual(mergeHits(allShards(3).map((shard) => segment.search(query, eligible, count, 10, [shard])), 10));
      expect(merged).toHaveLength(whole.length);
      // Each shard re-scores its own best candidates, so the merged list can only score higher.
      merged.forEach((hit, i) => expect(hit.score).toBeGreaterThanOrEqual(whole[i].score - 1e-9));
      if (eligible) for (const hit of merged) expect(eligible[hit.rowid]).toBe(1);
    }
  }
});

/** The in-memory VectorIndex's score of one chunk. */
function referenceScore(query: Float32Array, rowid: number): number {
  const only = new Uint8Array(3 * COUNT + 2);
  only[rowid] = 1;
  return reference.search(query, only, 1)[0].score;
}

test("scores are those of the in-memory VectorIndex for the same chunks", () => {
  // Few eligible chunks are all scored exactly: the very top k of the reference.
  const { eligible, count } = mask(0.01, 5);
  for (const query of queries.slice(0, 5)) expect(segment.search(query, eligible, count, 20)).toEqual(referenceTop(query, eligible, 20));
  // Through the lists, every hit keeps the reference's score of its chunk.
  for (const query of queries.slice(0, 5)) {
    for (const hit of segment.search(query, null, COUNT, 20)) expect(hit.score).toBe(referenceScore(query, hit.rowid));
  }
});

for (const fraction of [0.001, 0.01, 0.1, 0.5]) {
  test(`filtered search with ${fraction * 100} % eligible returns min(limit, eligible) eligible hits, lists or scan`, () => {
    const { eligible, count } = mask(fraction, Math.round(fraction * 1000) + 17);
    for (const source of [segment, fewestVisited]) {
      for (const [q, query] of queries.slice(0, 10).entries()) {
        const limit = q % 2 === 0 ? 10 : 100;
        const hits = source.search(query, eligible, count, limit);
        expect(hits).toHaveLength(Math.min(limit, count));
        for (const hit of hits) expect(eligible[hit.rowid]).toBe(1);
        // A filter leaving at most a third of the visit budget is scored exactly.
        if (count <= Math.max(4 * limit, COUNT * TUNING.visitedShare) / 3 && source === segment) expect(hits).toEqual(referenceTop(query, eligible, limit));
      }
    }
  });
}

test("a scan of a few eligible chunks finds their exact top k, walking the mask or testing every slot", () => {
  // Contiguous rowids: the scan walks the mask; rowids 9 apart (other knowledge bases' chunks between
  // them): it tests each slot instead. Both shards, with marks on word edges and at the last rowid.
  const small = vectors.slice(0, 1000);
  for (const spacing of [1, 9]) {
    const ids = small.map((_, i) => 5 + spacing * i);
    const dir = join(root, `flat-${spacing}`);
    writeVectorSegment(dir, rows(ids, small), DIMENSION);
    const flat = VectorSegment.open(dir, DIMENSION);
    const exact = new VectorIndex(DIMENSION);
    small.forEach((vector, i) => exact.set(ids[i], vector));
    const eligible = new Uint8Array(ids.at(-1)! + 1);
    const random = uniform(spacing);
    // Runs of consecutive slots too (a document's chunks): at the first slot, across words, to the last rowid.
    const inRun = (i: number) => i < 3 || (i >= 100 && i < 140) || i >= ids.length - 6;
    for (const [i, rowid] of ids.entries()) if (random() < 0.05 || i % 250 === 0 || rowid % 4 === 3 || inRun(i)) eligible[rowid] = 1;
    const count = eligible.reduce((sum, mark) => sum + mark, 0);
    for (const query of queries.slice(0, 5)) {
      const expected = exact.search(query, eligible, 15).map((hit) => ({ rowid: hit.id, score: hit.score }));
      expect(flat.search(query, eligible, count, 15)).toEqual(expected);
      expect(mergeHits(allShards(2).map((shard) => flat.search(query, eligible, count, 15, [shard])), 15)).toEqual(expected);
      expect(flat.search(query, eligible, count, 15, allShards(2))).toEqual(expected);
      expect(flat.search(query, eligible, count, 1000).map((hit) => hit.rowid).sort((a, b) => a - b)).toEqual(ids.filter((rowid) => eligible[rowid] === 1));
    }
  }
});

test("a filter whose count overstates the eligible chunks still gets every one of them", () => {
  const eligible = new Uint8Array(3 * COUNT + 2);
  const few = [rowids[10], rowids[1500], rowids[2999]];
  for (const rowid of few) eligible[rowid] = 1;
  const hits = fewestVisited.search(queries[0], eligible, COUNT / 2, 10);
  expect(hits.map((hit) => hit.rowid).sort((a, b) => a - b)).toEqual(few);
});

test("an incremental build (base + removed + added) keeps the base's centroids and answers like a fresh build", () => {
  const baseDir = join(root, "base");
  const removed = rowids.filter((_, i) => i % 10 === 3);
  const added = rowids.filter((_, i) => i % 10 === 7);
  const inBase = new Set(added);
  writeVectorSegment(
    baseDir,
    rows(rowids, vectors).filter((row) => !inBase.has(row.rowid)),
    DIMENSION,
    undefined,
    { lists: LISTS },
  );
  const base = VectorSegment.open(baseDir, DIMENSION, TUNING);
  const nextDir = join(root, "next");
  const build = writeVectorSegment(nextDir, rows(rowids, vectors).filter((row) => inBase.has(row.rowid)), DIMENSION, { segment: base, removed });
  expect(build).toEqual({ count: COUNT - removed.length, lists: LISTS, trained: false });

  const keptIndexes = rowids.flatMap((rowid, i) => (removed.includes(rowid) ? [] : [i]));
  const freshDir = join(root, "fresh");
  writeVectorSegment(freshDir, keptIndexes.map((i) => ({ rowid: rowids[i], vector: vectors[i] })), DIMENSION, undefined, { lists: LISTS });
  const next = VectorSegment.open(nextDir, DIMENSION, TUNING);
  const fresh = VectorSegment.open(freshDir, DIMENSION);
  expect(next.rowids).toEqual(fresh.rowids);
  expect(next.codes).toEqual(fresh.codes);
  expect(next.scales).toEqual(fresh.scales);
  expect(next.quantizer).toEqual(base.quantizer);
  expect(next.trainedCount).toBe(base.count);
  expect(next.pq!.codebooks).toEqual(base.pq!.codebooks);
  // The kept chunks keep their lists and product-quantized codes; the added ones get theirs from the
  // base's centroids and codebooks, as a fresh encoding would.
  const baseLists = base.slotLists();
  const nextLists = next.slotLists();
  const [basePositions, nextPositions] = [base.slotPositions(), next.slotPositions()];
  const codeBytes = base.pq!.codeBytes;
  const pqCode = (segment: VectorSegment, positions: Int32Array, slot: number) => blockedCode(segment.pqCodes!, positions[slot], codeBytes);
  for (const [slot, rowid] of next.rowids.entries()) {
    const baseSlot = base.rowids.indexOf(rowid);
    if (baseSlot < 0) continue;
    expect(nextLists[slot]).toBe(baseLists[baseSlot]);
    expect(pqCode(next, nextPositions, slot)).toEqual(pqCode(base, basePositions, baseSlot));
  }

  const keptVectors = keptIndexes.map((i) => vectors[i]);
  const keptRowids = keptIndexes.map((i) => rowids[i]);
  const gone = new Set(removed);
  let found = 0;
  for (const query of queries) {
    const hits = next.search(query, null, next.count, 10);
    expect(hits.some((hit) => gone.has(hit.rowid))).toBe(false);
    const exact = exactTop(keptVectors, keptRowids, query, 10);
    found += hits.filter((hit) => exact.includes(hit.rowid)).length;
  }
  expect(found / (queries.length * 10)).toBeGreaterThanOrEqual(0.95);
  // Each added chunk is found by its own vector through its list.
  for (const rowid of added.slice(0, 50)) {
    expect(next.search(vectors[rowids.indexOf(rowid)], null, next.count, 1)[0].rowid).toBe(rowid);
  }
  // Once the segment has halved since its centroids were trained, the next build trains them anew.
  const half = rowids.filter((_, i) => i % 10 < 6 && i % 10 !== 3);
  const shrunk = writeVectorSegment(join(root, "shrunk"), [], DIMENSION, { segment: next, removed: half });
  expect(shrunk).toEqual({ count: next.count - half.length, lists: 1, trained: true });
  const small = VectorSegment.open(join(root, "shrunk"), DIMENSION);
  expect(small.trainedCount).toBe(shrunk.count);
  expect(small.search(queries[0], null, COUNT, 10)).toHaveLength(10);
}, 120_000);

test("an empty segment opens and finds nothing; rows out of rowid order are refused", () => {
  writeVectorSegment(join(root, "empty"), [], DIMENSION);
  expect(VectorSegment.open(join(root, "empty"), DIMENSION).search(queries[0], null, 0, 10)).toEqual([]);
  expect(() => writeVectorSegment(join(root, "unordered"), rows([5, 4], vectors), DIMENSION)).toThrow(/ascending/);
  expect(() => VectorSegment.open(fullDir, 384)).toThrow(/512-d/);
});
