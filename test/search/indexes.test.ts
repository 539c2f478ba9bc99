// The in-memory index structures on their own: the Hamming shortlist of large vector sets finds what
// exact scoring finds, and dropping chunks (compaction) leaves exactly the index a fresh build would give.
import { expect, test } from "bun:test";
import { VectorIndex } from "../../src/search/vector-index.ts";
import { uniform } from "../../scripts/seeded-random.ts";

function seededRandom(seed: number) {
  const random = uniform(seed);
  return () => random() - 0.5;
}

/** Unit vectors around a few hundred cluster centres, as sentence embeddings of a corpus are. */
function clusteredVectors(count: number, dimension: number, random: () => number): Float32Array[] {
  const centres = Array.from({ length: 200 }, () => Float32Array.from({ length: dimension }, random));
  return Array.from({ length: count }, (_, i) => {
    const v = Float32Array.from(centres[i % centres.length], (x) => x + 0.6 * random());
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

function exactTop(vectors: Float32Array[], query: Float32Array, k: number): number[] {
  return vectors
    .map((v, slot) => ({ slot, score: v.reduce((sum, x, i) => sum + x * query[i], 0) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, k)
    .map((h) => h.slot);
}

test("vector search over more than 4,096 candidates (bit shortlist, then 8-bit codes) agrees with exact cosine", () => {
  const random = seededRandom(7);
  const vectors = clusteredVectors(8000, 512, random);
  const index = new VectorIndex(512);
  vectors.forEach((v, slot) => index.set(slot, v));
  let found = 0;
  const queries = clusteredVectors(40, 512, seededRandom(99));
  for (const query of queries) {
    const hits = index.search(query, null, 10);
    const exact = exactTop(vectors, query, 10);
    found += hits.filter((h) => exact.includes(h.id)).length;
    const direct = vectors[hits[0].id].reduce((sum, x, i) => sum + x * query[i], 0);
    expect(Math.abs(hits[0].score - direct)).toBeLessThan(0.01);
  }
  // A shortlist, not exhaustive: on these synthetic clusters it keeps ~93 % of the exact top 10.
  expect(found / (queries.length * 10)).toBeGreaterThan(0.9);
});

test("an eligibility mask limits vector results to the marked slots", () => {
  const vectors = clusteredVectors(6000, 64, seededRandom(3));
  const index = new VectorIndex(64);
  vectors.forEach((v, slot) => index.set(slot, v));
  const mask = new Uint8Array(6000);
  for (let slot = 0; slot < 6000; slot += 100) mask[slot] = 1;
  const hits = index.search(vectors[1], mask, 10);
  expect(hits).toHaveLength(10);
  for (const hit of hits) expect(hit.id % 100).toBe(0);
});

test("compaction gives the same vector results as building without the dropped chunks", () => {
  // 10,000 slots: three of the index's blocks of 4,096, so slots move between blocks.
  const vectors = clusteredVectors(10_000, 32, seededRandom(11));
  const dropped = (slot: number) => slot % 4 === 1;
  const full = { vector: new VectorIndex(32) };
  const fresh = { vector: new VectorIndex(32) };
  const remap = new Int32Array(10_000);
  let next = 0;
  vectors.forEach((vector, slot) => {
    full.vector.set(slot, vector);
    remap[slot] = dropped(slot) ? -1 : next++;
    if (!dropped(slot)) fresh.vector.set(remap[slot], vector);
  });
  full.vector.compact(remap, next);
  for (const query of [vectors[0], vectors[5_000], vectors[9_998]]) expect(full.vector.search(query, null, 20)).toEqual(fresh.vector.search(query, null, 20));
  expect(full.vector.allocatedBytes).toBe(fresh.vector.allocatedBytes);
});
