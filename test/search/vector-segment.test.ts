// The on-disk vector segment on its own: written, reopened from its files, searched. Graph results agree
// with exact cosine; filtered searches return min(limit, eligible) eligible hits at every selectivity and
// exactly the exact filtered top k when few chunks are eligible; an incremental build (base segment +
// changes) holds the same chunks and answers like a build from scratch.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VectorIndex } from "../../src/search/vector-index.ts";
import { SEARCH_TUNING, VectorSegment } from "../../src/search/vector/segment.ts";
import { writeVectorSegment, type VectorRow } from "../../src/search/vector/segment-writer.ts";
import { exactTop, uniform, unitVectors } from "./vector-segment-data.ts";

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

const fullDir = join(root, "full");
writeVectorSegment(fullDir, rows(rowids, vectors), DIMENSION);
const segment = VectorSegment.open(fullDir, DIMENSION);
/** The same segment made to ask the graph first whatever the filter (as if graph results cost nothing). */
const graphFirst = VectorSegment.open(fullDir, DIMENSION, { ...SEARCH_TUNING, graphCost: 0 });
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
  expect(segment.count).toBe(COUNT);
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

test("scores are those of the in-memory VectorIndex for the same chunks", () => {
  const { eligible, count } = mask(0.05, 5);
  for (const query of queries.slice(0, 5)) expect(segment.search(query, eligible, count, 20)).toEqual(referenceTop(query, eligible, 20));
});

for (const fraction of [0.001, 0.01, 0.1, 0.5]) {
  test(`filtered search with ${fraction * 100} % eligible returns min(limit, eligible) eligible hits, graph or scan`, () => {
    const { eligible, count } = mask(fraction, Math.round(fraction * 1000) + 17);
    for (const source of [segment, graphFirst]) {
      for (const [q, query] of queries.slice(0, 10).entries()) {
        const limit = q % 2 === 0 ? 10 : 100;
        const hits = source.search(query, eligible, count, limit);
        expect(hits).toHaveLength(Math.min(limit, count));
        for (const hit of hits) expect(eligible[hit.rowid]).toBe(1);
        if (count <= 100) expect(hits).toEqual(referenceTop(query, eligible, limit));
      }
    }
  });
}

test("a filter whose count overstates the eligible chunks still gets every one of them", () => {
  const eligible = new Uint8Array(3 * COUNT + 2);
  const few = [rowids[10], rowids[1500], rowids[2999]];
  for (const rowid of few) eligible[rowid] = 1;
  const hits = graphFirst.search(queries[0], eligible, COUNT / 2, 10);
  expect(hits.map((hit) => hit.rowid).sort((a, b) => a - b)).toEqual(few);
});

test("an incremental build (base + removed + added) holds the same chunks and answers like a fresh build", () => {
  const baseDir = join(root, "base");
  const removed = rowids.filter((_, i) => i % 10 === 3);
  const added = rowids.filter((_, i) => i % 10 === 7);
  const inBase = new Set(added);
  writeVectorSegment(
    baseDir,
    rows(rowids, vectors).filter((row) => !inBase.has(row.rowid)),
    DIMENSION,
  );
  const base = VectorSegment.open(baseDir, DIMENSION);
  const nextDir = join(root, "next");
  const build = writeVectorSegment(nextDir, rows(rowids, vectors).filter((row) => inBase.has(row.rowid)), DIMENSION, { segment: base, removed });
  expect(build).toEqual({ count: COUNT - removed.length, incremental: true });

  const keptIndexes = rowids.flatMap((rowid, i) => (removed.includes(rowid) ? [] : [i]));
  const freshDir = join(root, "fresh");
  writeVectorSegment(freshDir, keptIndexes.map((i) => ({ rowid: rowids[i], vector: vectors[i] })), DIMENSION);
  const next = VectorSegment.open(nextDir, DIMENSION);
  const fresh = VectorSegment.open(freshDir, DIMENSION);
  expect(next.rowids).toEqual(fresh.rowids);
  expect(next.codes).toEqual(fresh.codes);
  expect(next.scales).toEqual(fresh.scales);

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
  // Each added chunk is found by its own vector through the updated graph.
  for (const rowid of added.slice(0, 50)) {
    expect(next.search(vectors[rowids.indexOf(rowid)], null, next.count, 1)[0].rowid).toBe(rowid);
  }
  // Once the deletions patched into a graph pass a fifth of it, the next update builds it anew.
  expect(next.graphRemovals).toBe(removed.length);
  const more = rowids.filter((_, i) => i % 10 === 4);
  const sweep = writeVectorSegment(join(root, "sweep"), [], DIMENSION, { segment: next, removed: more });
  expect(sweep).toEqual({ count: next.count - more.length, incremental: false });
  const swept = VectorSegment.open(join(root, "sweep"), DIMENSION);
  expect(swept.graphRemovals).toBe(0);
  expect(swept.search(queries[0], null, COUNT, 10)).toHaveLength(10);
}, 120_000);

test("an empty segment opens and finds nothing; rows out of rowid order are refused", () => {
  writeVectorSegment(join(root, "empty"), [], DIMENSION);
  expect(VectorSegment.open(join(root, "empty"), DIMENSION).search(queries[0], null, 0, 10)).toEqual([]);
  expect(() => writeVectorSegment(join(root, "unordered"), rows([5, 4], vectors), DIMENSION)).toThrow(/ascending/);
  expect(() => VectorSegment.open(fullDir, 384)).toThrow(/512-d/);
});
