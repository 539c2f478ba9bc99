// The WebAssembly vector kernels (src/search/vector/kernels.wat): the embedded module is the one the
// source compiles to; product-quantized scores are the f32 sums the kernel promises, 8-bit code scores
// are bit for bit codeCosine's, at dimensions with and without a remainder mod 4, for single codes and
// ranges, across more than one batch; the hits kept are the same as pushing every score; lists are
// ranked by exactly dot()'s similarities.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { KERNELS_MODULE, kernelsModule } from "../../scripts/build-kernels.ts";
import { CodeScan } from "../../src/search/vector/code-scan.ts";
import { codeCosine } from "../../src/search/vector/int8-codes.ts";
import { dot } from "../../src/search/vector/k-means.ts";
import { ListRanker } from "../../src/search/vector/list-ranker.ts";
import { PQ_CENTROIDS } from "../../src/search/vector/pq.ts";
import { PqScan } from "../../src/search/vector/pq-scan.ts";
import { TopK } from "../../src/search/topk.ts";
import { uniform } from "../../scripts/seeded-random.ts";

const random = uniform(41);
/** More codes than one kernel batch (4,096), so that a full batch is flushed mid-way. */
const COUNT = 5000;
const LIMIT = 50;

function sortedHits(best: TopK): Array<[number, number]> {
  return best.sorted().map((hit) => [hit.id, hit.score]);
}

test("kernels-wasm.ts is what kernels.wat compiles to (npm run build:kernels)", async () => {
  expect(readFileSync(KERNELS_MODULE, "utf8")).toBe(await kernelsModule());
});

for (const parts of [64, 48, 7, 2, 1]) {
  test(`product-quantized scores of ${parts}-part codes: even and odd parts summed apart in f32`, () => {
    const table = Float32Array.from({ length: parts * PQ_CENTROIDS }, () => random() - 0.5);
    const codes = Uint8Array.from({ length: COUNT * parts }, () => Math.floor(random() * PQ_CENTROIDS));
    const slots = Int32Array.from({ length: COUNT }, (_, position) => COUNT - position);
    const expected = new TopK(LIMIT);
    for (let position = 0; position < COUNT; position++) {
      let even = 0;
      let odd = 0;
      for (let part = 0; part < parts; part++) {
        const value = table[part * PQ_CENTROIDS + codes[position * parts + part]];
        if (part % 2 === 0) even = Math.fround(even + value);
        else odd = Math.fround(odd + value);
      }
      expected.push(slots[position], Math.fround(even + odd));
    }
    const ranged = new TopK(LIMIT);
    const scan = new PqScan(table, codes, parts, slots, ranged);
    scan.addRange(0, 1234);
    scan.addRange(1234, COUNT);
    scan.flush();
    expect(sortedHits(ranged)).toEqual(sortedHits(expected));

    const single = new TopK(LIMIT);
    const oneByOne = new PqScan(table, codes, parts, slots, single);
    for (let position = 0; position < COUNT; position++) oneByOne.add(position);
    oneByOne.flush();
    expect(sortedHits(single)).toEqual(sortedHits(expected));
  });
}

for (const dimension of [512, 384, 7, 3]) {
  test(`${dimension}-d code scores are exactly codeCosine's`, () => {
    const query = Float32Array.from({ length: dimension }, () => random() - 0.5);
    const codes = Int8Array.from({ length: COUNT * dimension }, () => Math.floor(random() * 255) - 127);
    const scales = Float32Array.from({ length: COUNT }, () => random() / 127);
    const expected = new TopK(LIMIT);
    for (let slot = 0; slot < COUNT; slot++) expected.push(slot, codeCosine(query, codes, slot * dimension, scales[slot]));

    const ranged = new TopK(LIMIT);
    const scan = new CodeScan(query, codes, scales, ranged);
    scan.addRange(0, COUNT);
    scan.flush();
    expect(sortedHits(ranged)).toEqual(sortedHits(expected));

    // Every slot kept (a limit above the count): each score compared, not only the best.
    const all = new TopK(COUNT);
    const oneByOne = new CodeScan(query, codes, scales, all);
    for (let slot = COUNT - 1; slot >= 0; slot--) oneByOne.add(slot);
    oneByOne.flush();
    const scores = new Map(sortedHits(all));
    for (let slot = 0; slot < COUNT; slot++) expect(scores.get(slot)).toBe(codeCosine(query, codes, slot * dimension, scales[slot]));
  });
}

for (const [lists, dimension] of [[1000, 512], [37, 7], [5, 2]]) {
  test(`${lists} lists of ${dimension}-d centroids are ranked by exactly dot()'s similarities`, () => {
    const centroids = Float32Array.from({ length: lists * dimension }, () => random() - 0.5);
    // Two identical centroids: a tie, which keeps the lower list first.
    centroids.copyWithin(dimension, 0, dimension);
    const ranker = new ListRanker(centroids, dimension);
    for (let q = 0; q < 5; q++) {
      const query = Float32Array.from({ length: dimension }, () => random() - 0.5);
      const scores = Array.from({ length: lists }, (_, list) => dot(centroids, list * dimension, query, 0, dimension));
      const expected = Array.from({ length: lists }, (_, list) => list).sort((x, y) => scores[y] - scores[x] || x - y);
      expect([...ranker.rank(query)]).toEqual(expected);
    }
  });
}
