// The WebAssembly search kernels (src/search/kernels/kernels.wat): the embedded module is the one the
// source compiles to; product-quantized codes are each part's nearest centroid, and their scores are the sums of blocked codes' table bytes, 8-bit code scores
// are bit for bit codeCosine's, at dimensions with and without a remainder mod 8, for single codes and
// ranges, across more than one batch; the hits kept are the same as pushing every score; lists are
// ranked by exactly dot()'s similarities, and lookup tables are exactly what those similarities round to; the read-backs (keyword window, product-quantized batch) find every score above a threshold; packed posting values unpack at every bit width.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { KERNELS_MODULE, kernelsModule } from "../../scripts/build-kernels.ts";
import { CodeScan } from "../../src/search/vector/code-scan.ts";
import { codeCosine, queryCodes } from "../../src/search/vector/int8-codes.ts";
import { dot } from "../../src/search/vector/k-means.ts";
import { Kernels, writeUnpackTable } from "../../src/search/kernels/kernels.ts";
import { ListRanker } from "../../src/search/vector/list-ranker.ts";
import { blockedLength, PQ_BLOCK, setBlockedCode } from "../../src/search/vector/pq-blocks.ts";
import { PQ_CENTROIDS, ProductQuantizer } from "../../src/search/vector/pq.ts";
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

/** The bytes of a code of four-bit `partCodes` (ProductQuantizer.encode's layout), padded to `codeBytes`. */
function packCode(partCodes: ArrayLike<number>, codeBytes: number): Uint8Array {
  const code = new Uint8Array(codeBytes);
  for (let part = 0; part < partCodes.length; part++) code[part >> 1] |= partCodes[part] << ((part & 1) * 4);
  return code;
}

/** Bytes of a code of `parts` parts (ProductQuantizer.codeBytes). */
const codeBytesOf = (parts: number) => 2 * Math.ceil(parts / 4);

for (const parts of [128, 96, 7, 2, 1]) {
  test(`product-quantized scores of ${parts}-part blocked codes: the sums of their table bytes`, () => {
    const codeBytes = codeBytesOf(parts);
    // Table bytes up to 63 (the kernel's bound); the padding parts' are 0.
    const table = Uint8Array.from({ length: 2 * codeBytes * PQ_CENTROIDS }, (_, i) => (i < parts * PQ_CENTROIDS ? Math.floor(random() * 64) : 0));
    const rowCodes = Array.from({ length: COUNT }, () => Uint8Array.from({ length: parts }, () => Math.floor(random() * PQ_CENTROIDS)));
    const codes = new Uint8Array(blockedLength(COUNT, codeBytes));
    rowCodes.forEach((code, position) => setBlockedCode(codes, position, packCode(code, codeBytes)));
    const slots = Int32Array.from({ length: COUNT }, (_, position) => COUNT - position);
    const sum = (position: number) => rowCodes[position].reduce((total, code, part) => total + table[part * PQ_CENTROIDS + code], 0);

    // Ranges that start and end inside blocks, one within a single block, and an empty one.
    const ranges = [[3, 1234], [1234, 1239], [1239, 1239], [1239, COUNT - 5]];
    const expected = new TopK(LIMIT);
    for (const [from, to] of ranges) for (let position = from; position < to; position++) expected.push(slots[position], sum(position));
    const ranged = new TopK(LIMIT);
    const scan = new PqScan(table, codes, codeBytes, slots, ranged);
    for (const [from, to] of ranges) scan.addRange(from, to);
    scan.flush();
    expect(sortedHits(ranged)).toEqual(sortedHits(expected));

    // Single codes (filtered searches), mixed with a range after them; every score kept, not only the best.
    const all = new TopK(COUNT);
    const mixed = new PqScan(table, codes, codeBytes, slots, all);
    for (let position = COUNT - 1; position >= 2000; position -= 3) mixed.add(position);
    mixed.addRange(17, 40);
    mixed.flush();
    const scores = new Map(sortedHits(all));
    expect(scores.size).toBe(Math.ceil((COUNT - 2000) / 3) + 23);
    for (let position = COUNT - 1; position >= 2000; position -= 3) expect(scores.get(slots[position])).toBe(sum(position));
    for (let position = 17; position < 40; position++) expect(scores.get(slots[position])).toBe(sum(position));

    // A mask checked as scores are read back: ranges scored whole, only the marked positions' rowids offered.
    const rowids = Int32Array.from({ length: COUNT }, (_, position) => 2 * position + 1);
    const marked = new Uint8Array(2 * COUNT + 2);
    for (let position = 0; position < COUNT; position++) if (random() < 0.3) marked[rowids[position]] = 1;
    const expectedMarked = new TopK(LIMIT);
    for (const [from, to] of ranges) for (let position = from; position < to; position++) if (marked[rowids[position]] === 1) expectedMarked.push(slots[position], sum(position));
    const masked = new TopK(LIMIT);
    const maskedScan = new PqScan(table, codes, codeBytes, slots, masked, { mask: marked, rowids });
    for (const [from, to] of ranges) maskedScan.addRange(from, to);
    maskedScan.flush();
    expect(sortedHits(masked)).toEqual(sortedHits(expectedMarked));
  });
}

test("encoded codes are each part's nearest centroid, two parts a byte", () => {
  const dimension = 24;
  const codebooks = Float32Array.from({ length: dimension * PQ_CENTROIDS }, () => random() - 0.5);
  const pq = new ProductQuantizer(dimension, codebooks);
  const vectors = Float32Array.from({ length: 50 * dimension }, () => random() - 0.5);
  const codes = pq.encode(vectors);
  const d = pq.subDimension;
  expect([pq.parts, pq.codeBytes, codes.length]).toEqual([6, 4, 50 * 4]);
  for (let v = 0; v < 50; v++) {
    const nearestCodes = Array.from({ length: pq.parts }, (_, part) => {
      const distance = (code: number) => {
        let sum = 0;
        for (let i = 0; i < d; i++) sum += (vectors[v * dimension + part * d + i] - codebooks[(part * PQ_CENTROIDS + code) * d + i]) ** 2;
        return sum;
      };
      return Array.from({ length: PQ_CENTROIDS }, (_, code) => code).reduce((best, code) => (distance(code) < distance(best) ? code : best));
    });
    expect([...codes.subarray(v * 4, (v + 1) * 4)]).toEqual([...packCode(nearestCodes, 4)]);
  }
});

test("a lookup table's byte sums rank codes as the float similarities do, and stay within 16 bits past 1,040 parts", () => {
  for (const dimension of [512, 8192]) {
    const codebooks = Float32Array.from({ length: dimension * PQ_CENTROIDS }, () => random() - 0.5);
    const pq = new ProductQuantizer(dimension, codebooks);
    const query = Float32Array.from({ length: dimension }, () => random() - 0.5);
    const table = pq.lookupTable(query);
    const d = pq.subDimension;
    const similarity = (part: number, code: number) => dot(query, part * d, codebooks, (part * PQ_CENTROIDS + code) * d, d);
    // The most similar centroid of the part with the widest range gets the top byte; every part's least similar gets 0.
    expect(Math.max(...table)).toBe(Math.min(63, Math.floor(0xffff / pq.parts)));
    for (let part = 0; part < pq.parts; part++) {
      const row = [...table.subarray(part * PQ_CENTROIDS, (part + 1) * PQ_CENTROIDS)];
      expect(Math.min(...row)).toBe(0);
      const bySimilarity = row.map((_, code) => code).sort((x, y) => similarity(part, x) - similarity(part, y));
      for (let i = 1; i < bySimilarity.length; i++) expect(row[bySimilarity[i]]).toBeGreaterThanOrEqual(row[bySimilarity[i - 1]]);
    }
    // Blocks of codes with the highest byte in every part sum without overflow.
    const rowOf = (part: number) => table.subarray(part * PQ_CENTROIDS, (part + 1) * PQ_CENTROIDS);
    const topCode = Array.from({ length: pq.parts }, (_, part) => rowOf(part).indexOf(Math.max(...rowOf(part))));
    const codes = new Uint8Array(blockedLength(PQ_BLOCK, pq.codeBytes));
    for (let position = 0; position < PQ_BLOCK; position++) setBlockedCode(codes, position, packCode(topCode, pq.codeBytes));
    const best = new TopK(1);
    const scan = new PqScan(table, codes, pq.codeBytes, new Int32Array(PQ_BLOCK), best);
    scan.addRange(0, PQ_BLOCK);
    scan.flush();
    expect(best.sorted()[0].score).toBe(topCode.reduce((total, code, part) => total + table[part * PQ_CENTROIDS + code], 0));
    expect(best.sorted()[0].score).toBeLessThan(0x10000);
  }
});

test("a lookup table is exactly the bytes dot() similarities round to, for every sub-vector size", () => {
  for (const dimension of [512, 4096, 388, 390, 13]) {
    const codebooks = Float32Array.from({ length: dimension * PQ_CENTROIDS }, () => random() - 0.5);
    const pq = new ProductQuantizer(dimension, codebooks);
    const d = pq.subDimension;
    for (let q = 0; q < 5; q++) {
      const query = Float32Array.from({ length: dimension }, () => random() - 0.5);
      // The definition (pq.ts lookupTable): each part's similarities less its smallest, in steps of the widest range / top, rounded; padding parts 0.
      const values = Array.from({ length: pq.parts * PQ_CENTROIDS }, (_, i) => dot(query, Math.floor(i / PQ_CENTROIDS) * d, codebooks, i * d, d));
      const lowest = Array.from({ length: pq.parts }, (_, part) => Math.min(...values.slice(part * PQ_CENTROIDS, (part + 1) * PQ_CENTROIDS)));
      const widest = Math.max(...lowest.map((low, part) => Math.max(...values.slice(part * PQ_CENTROIDS, (part + 1) * PQ_CENTROIDS)) - low));
      const perStep = Math.min(63, Math.floor(0xffff / pq.parts)) / widest;
      const expected = values.map((value, i) => Math.round((value - lowest[Math.floor(i / PQ_CENTROIDS)]) * perStep));
      const padding = new Array((2 * pq.codeBytes - pq.parts) * PQ_CENTROIDS).fill(0);
      expect([...pq.lookupTable(query)]).toEqual([...expected, ...padding]);
    }
  }
});

for (const dimension of [512, 389, 13, 7, 3]) {
  test(`${dimension}-d code scores are exactly codeCosine's`, () => {
    const query = Float32Array.from({ length: dimension }, () => random() - 0.5);
    const codes = Int8Array.from({ length: COUNT * dimension }, () => Math.floor(random() * 255) - 127);
    const scales = Float32Array.from({ length: COUNT }, () => random() / 127);
    const expected = new TopK(LIMIT);
    const query16 = queryCodes(query);
    for (let slot = 0; slot < COUNT; slot++) expected.push(slot, codeCosine(query16, codes, slot * dimension, scales[slot]));

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
    for (let slot = 0; slot < COUNT; slot++) expect(scores.get(slot)).toBe(codeCosine(query16, codes, slot * dimension, scales[slot]));
  });
}

test("16-bit query values keep the largest possible code sums within 32 bits, at any dimension", () => {
  for (const dimension of [512, 1024, 3072, 9]) {
    // Every value at the extreme, of one sign: the largest sum there is.
    const query = new Float32Array(dimension).fill(-0.3);
    const codes = new Int8Array(2 * dimension).fill(-127);
    codes.fill(127, dimension);
    const query16 = queryCodes(query);
    const best = new TopK(2);
    const scan = new CodeScan(query, codes, new Float32Array([1, 1]), best);
    scan.addRange(0, 2);
    scan.flush();
    const scores = new Map(sortedHits(best));
    expect(scores.get(0)).toBe(codeCosine(query16, codes, 0, 1));
    expect(scores.get(1)).toBe(codeCosine(query16, codes, dimension, 1));
    expect(scores.get(0)! / 127).toBeCloseTo(0.3 * dimension, 2);
    expect(-scores.get(1)! / 127).toBeCloseTo(0.3 * dimension, 2);
  }
});

for (const [lists, dimension] of [[1000, 512], [37, 7], [5, 2]]) {
  test(`${lists} lists of ${dimension}-d centroids are ranked by exactly dot()'s similarities`, () => {
    const centroids = Float32Array.from({ length: lists * dimension }, () => random() - 0.5);
    // Identical centroids: ties, which keep the lower list first.
    centroids.copyWithin(dimension, 0, dimension);
    centroids.copyWithin(3 * dimension, 0, dimension);
    const ranker = new ListRanker(centroids, dimension);
    for (let q = 0; q < 5; q++) {
      const query = Float32Array.from({ length: dimension }, () => random() - 0.5);
      const scores = Array.from({ length: lists }, (_, list) => dot(centroids, list * dimension, query, 0, dimension));
      const expected = Array.from({ length: lists }, (_, list) => list).sort((x, y) => scores[y] - scores[x] || x - y);
      // All of them, whether the nearest few, half or all are sorted first.
      for (const sortedFirst of [1, 3, Math.floor(lists / 2), lists, lists + 1]) expect([...ranker.rank(query, sortedFirst)]).toEqual(expected);
    }
  });
}

test("firstAboveF32 finds each score above the threshold, in order, whatever the range's length and start", () => {
  const kernels = new Kernels();
  const count = 1003;
  kernels.reserve(count * 8);
  const values = kernels.floats.subarray(0, count);
  for (let i = 0; i < count; i++) values[i] = random() < 0.05 ? 1 + random() : random() < 0.5 ? 0 : random();
  values[count - 1] = 2; // the last value, past the last whole group of eight
  for (const [from, to] of [[0, count], [1, count - 1], [5, 6], [7, 7], [2, 31]]) {
    const found: number[] = [];
    for (let at = kernels.firstAboveF32(from * 4, to * 4, 1); at < to * 4; at = kernels.firstAboveF32(at + 4, to * 4, 1)) found.push(at / 4);
    const expected: number[] = [];
    for (let i = from; i < to; i++) if (values[i] > 1) expected.push(i);
    expect(found).toEqual(expected);
  }
  expect(kernels.firstAboveF32(0, count * 4, 1.5)).toBeLessThan(count * 4);
  expect(kernels.firstAboveF32(0, count * 4, 2)).toBe(count * 4);
  expect(kernels.firstAboveF32(0, count * 4, -Infinity)).toBe(0);
});

test("takeAbove finds each score above the threshold, in order, whatever the range's length and start, and leaves the range read back all zeros (the caller clearing what it takes)", () => {
  const kernels = new Kernels();
  const count = 1003;
  kernels.reserve(count * 8);
  for (const [from, to] of [[0, count], [1, count - 1], [5, 6], [7, 7], [2, 31]]) {
    const values = kernels.doubles.subarray(0, count);
    for (let i = 0; i < count; i++) values[i] = random() < 0.05 ? 1 + random() : random() < 0.5 ? 0 : random();
    values[count - 1] = 2;
    const before = Float64Array.from(values);
    const found: number[] = [];
    for (let at = kernels.takeAbove(from * 8, to * 8, 1); at < to * 8; at = kernels.takeAbove(at + 8, to * 8, 1)) {
      found.push(at / 8);
      values[at / 8] = 0;
    }
    const expected: number[] = [];
    for (let i = from; i < to; i++) if (before[i] > 1) expected.push(i);
    expect(found).toEqual(expected);
    for (let i = 0; i < count; i++) expect(values[i]).toBe(i >= from && i < to ? 0 : before[i]);
  }
  const values = kernels.doubles.subarray(0, count);
  values.fill(0.5);
  values[count - 1] = 2; // past the last whole group of four
  expect(kernels.takeAbove(0, count * 8, 1.5)).toBe((count - 1) * 8);
  values[count - 1] = 2;
  expect(kernels.takeAbove(0, count * 8, 2)).toBe(count * 8);
  expect(values.every((value) => value === 0)).toBe(true);
  values[0] = 0.25;
  expect(kernels.takeAbove(0, count * 8, -Infinity)).toBe(0);
  expect(values[0]).toBe(0.25);
});

test("unpacking reads back values of every width from 0 to 32 bits, packed least significant bit first, at any count", () => {
  const kernels = new Kernels();
  const tableAt = 0;
  const srcAt = 4096;
  const outAt = 8192;
  kernels.reserve(16384);
  writeUnpackTable(kernels, tableAt);
  const words = new Uint32Array(kernels.bytes.buffer, srcAt, 1024);
  const out = new Uint32Array(kernels.bytes.buffer, outAt, 136);
  for (let bits = 0; bits <= 32; bits++) {
    for (const count of [1, 7, 8, 9, 100, 128]) {
      const values = Array.from({ length: count }, () => (bits === 0 ? 0 : Math.floor(random() * 2 ** bits)));
      words.fill(0);
      values.forEach((value, i) => {
        for (let b = 0; b < bits; b++) if (Math.floor(value / 2 ** b) % 2 === 1) words[(i * bits + b) >>> 5] |= 1 << ((i * bits + b) & 31);
      });
      kernels.unpackValues(srcAt, bits, count, outAt, tableAt);
      expect(Array.from(out.subarray(0, count))).toEqual(values);
    }
  }
});
