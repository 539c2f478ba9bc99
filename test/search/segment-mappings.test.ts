// The search threads read a segment through the HTTP thread's one mapping of each file (segment-mappings.ts):
// however many threads search it, the process maps each file once, and the mapping goes only after every
// thread has dropped its views. Checked on a real segment, real search threads and /proc/self/maps.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SegmentMappings } from "../../src/search/segment-mappings.ts";
import { SegmentSearcher } from "../../src/search/segment-searcher.ts";
import { allShards } from "../../src/search/shard.ts";
import { mergeHits } from "../../src/search/rowid-hit.ts";
import { VectorSegment } from "../../src/search/vector/segment.ts";
import { SEGMENT_FILES } from "../../src/search/vector/segment-files.ts";
import { writeVectorSegment } from "../../src/search/vector/segment-writer.ts";
import { unitVectors } from "./vector-segment-data.ts";

const DIMENSION = 512;
const root = mkdtempSync(join(tmpdir(), "quarry-segment-mappings-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const pool = unitVectors(2010, DIMENSION, 1, 40);
const queries = pool.slice(2000);
const dir = join(root, "vector");
writeVectorSegment(dir, pool.slice(0, 2000).map((vector, i) => ({ rowid: 2 * i + 1, vector })), DIMENSION, undefined, { lists: 16 });
const codesPath = join(dir, SEGMENT_FILES.codes);

/** How many mappings of the file this process has. */
function mappingsOf(path: string): number {
  return readFileSync("/proc/self/maps", "utf8").split("\n").filter((line) => line.endsWith(` ${path}`)).length;
}

test("a directory held twice is mapped once; it stays mapped until its last holder lets go, unless held again", () => {
  const other = join(root, "other");
  writeVectorSegment(other, pool.slice(0, 300).map((vector, i) => ({ rowid: i + 1, vector })), DIMENSION);
  writeFileSync(join(other, "empty"), "");
  const mappings = new SegmentMappings();
  const first = mappings.hold(other);
  const second = mappings.hold(other);
  expect(second).toEqual(first);
  // Empty files are left out (there is nothing to map).
  expect(first.map((file) => file.path)).not.toContain(join(other, "empty"));
  const codes = join(other, SEGMENT_FILES.codes);
  expect(mappings.map(codes)).toBe(mappings.map(codes));
  expect(mappingsOf(codes)).toBe(1);
  expect(mappings.letGo(other)).toBeNull(); // one holder left
  const firstLetGo = mappings.letGo(other)!;
  expect(firstLetGo).not.toBeNull();
  // Held again before the threads answered that let-go: the mappings stay, at the same addresses.
  expect(mappings.hold(other)).toEqual(first);
  mappings.unmap(other, firstLetGo);
  expect(mappings.held().map(([held]) => held)).toEqual([other]);
  // Let go again before the answers to the first let-go: those answers do not unmap it (a search sent after
  // the new hold may still be queued behind them); the answers to the second one do.
  const secondLetGo = mappings.letGo(other)!;
  mappings.unmap(other, firstLetGo);
  expect(mappings.map(codes)).toBe(mappings.map(codes));
  // On its way out: not sent to a thread that starts meanwhile.
  expect(mappings.held()).toEqual([]);
  mappings.unmap(other, secondLetGo);
  // A file of no held directory gets a mapping of its own.
  expect(mappings.map(codes)).not.toBe(mappings.map(codes));
});

/** What the threads should answer: the segment searched here, shard by shard, through the same mapping (let go on return). */
function shardedHits(searcher: SegmentSearcher) {
  const segment = VectorSegment.open(dir, DIMENSION, undefined, (path) => searcher.mapping(path));
  return queries.map((query) => mergeHits(allShards(searcher.threadCount).map((shard) => segment.search(query, null, 2000, 10, [shard])), 10));
}

/** The flags of the process's mapping of the file (smaps VmFlags: "hg" is MADV_HUGEPAGE). */
function mappingFlagsOf(path: string): string[] {
  const entries = readFileSync("/proc/self/smaps", "utf8").split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/);
  const entry = entries.find((text) => text.split("\n")[0].endsWith(` ${path}`));
  return entry?.match(/^VmFlags:(.*)$/m)?.[1].trim().split(/\s+/) ?? [];
}

// Without transparent huge pages in the kernel there is no advice to give.
test.skipIf(!existsSync("/sys/kernel/mm/transparent_hugepage/enabled"))("files of 2 MB and more are mapped with 2 MB pages asked for, smaller ones as they are", () => {
  const big = join(root, "big");
  mkdirSync(big);
  writeFileSync(join(big, "large.bin"), new Uint8Array(4 << 20).fill(1));
  writeFileSync(join(big, "small.bin"), new Uint8Array(64 << 10).fill(1));
  const mappings = new SegmentMappings();
  mappings.hold(big);
  expect(mappingFlagsOf(join(big, "large.bin"))).toContain("hg");
  expect(mappingFlagsOf(join(big, "small.bin"))).toContain("rd");
  expect(mappingFlagsOf(join(big, "small.bin"))).not.toContain("hg");
  mappings.unmap(big, mappings.letGo(big)!);
});

test("the search threads answer through the HTTP thread's mapping, with the hits of the segment's own; closing lets it go", async () => {
  const searcher = new SegmentSearcher(root);
  searcher.start();
  try {
    searcher.open(dir);
    const expected = shardedHits(searcher);
    for (const [q, query] of queries.entries()) expect(await searcher.vector(dir, query, null, 2000, 10)).toEqual(expected[q]);
    // Every thread has searched every list's pages of the file, through one mapping.
    expect(mappingsOf(codesPath)).toBe(1);
    await searcher.close(dir);
    // Each thread answered the close; the mapping is unmapped once collected.
    for (let attempt = 0; attempt < 20 && mappingsOf(codesPath) > 0; attempt++) {
      Bun.gc(true);
      await Bun.sleep(10);
    }
    expect(mappingsOf(codesPath)).toBe(0);
    // Opened again, it is searched as before.
    searcher.open(dir);
    expect((await searcher.vector(dir, queries[0], null, 2000, 10)).length).toBe(10);
    expect(mappingsOf(codesPath)).toBe(1);
  } finally {
    searcher.stop();
  }
});

test("let go, held again, searched and let go again before the threads answered: the searches read live mappings", async () => {
  const searcher = new SegmentSearcher(root);
  searcher.start();
  try {
    searcher.open(dir);
    const firstClose = searcher.close(dir);
    searcher.open(dir);
    const searches = Array.from({ length: 300 }, (_, i) => searcher.vector(dir, queries[i % queries.length], null, 2000, 10));
    const secondClose = searcher.close(dir);
    // The threads answer the first close before the searches queued behind it; a collection then would
    // unmap the files under them (the process crashed here when the first close let the mappings go).
    await firstClose;
    Bun.gc(true);
    const answers = await Promise.all(searches);
    expect(answers.every((hits) => hits.length === 10)).toBe(true);
    await secondClose;
  } finally {
    searcher.stop();
  }
});

test("closed while searches of it wait for a thread: they run first, and no thread maps its files on its own", async () => {
  const searcher = new SegmentSearcher(root);
  searcher.start();
  try {
    searcher.open(dir);
    // More searches than the threads hold at once: most wait on this thread when the close comes.
    const searches = Array.from({ length: 200 }, (_, i) => searcher.vector(dir, queries[i % queries.length], null, 2000, 10));
    const closed = searcher.close(dir);
    const answers = await Promise.all(searches);
    expect(answers.every((hits) => hits.length === 10)).toBe(true);
    await closed;
    // A search run after its thread dropped the views would have mapped the file again, for good.
    for (let attempt = 0; attempt < 20 && mappingsOf(codesPath) > 0; attempt++) {
      Bun.gc(true);
      await Bun.sleep(10);
    }
    expect(mappingsOf(codesPath)).toBe(0);
  } finally {
    searcher.stop();
  }
});
