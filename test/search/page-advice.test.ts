// Pages of a mapped file that are not in memory: willNeed (src/search/page-advice.ts) has the OS read the
// pages asked for, and only those; inMemory tells them apart without reading them; a re-score of candidates
// whose codes are out of memory (vector/kernel-scan.ts addEach, which then asks for their pages all at once)
// scores exactly as it does in memory, and so does a whole vector segment's search (which also asks for its
// lists' pages ahead, vector/segment.ts). Pages are put out of memory with posix_fadvise(DONTNEED)
// (scripts/page-cache.ts), which a file on disk honours once synced.
import { afterAll, expect, test } from "bun:test";
import { closeSync, fsyncSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FFIType, ptr } from "bun:ffi";
import { openLibc } from "../../src/runtime/libc.ts";
import { inMemory, willNeed } from "../../src/search/page-advice.ts";
import { CodeScan } from "../../src/search/vector/code-scan.ts";
import { VectorSegment } from "../../src/search/vector/segment.ts";
import { writeVectorSegment } from "../../src/search/vector/segment-writer.ts";
import { allShards } from "../../src/search/shard.ts";
import { newMask } from "../../src/search/mask.ts";
import { unitVectors } from "./vector-segment-data.ts";
import { TopK } from "../../src/search/topk.ts";
import { uniform } from "../../scripts/seeded-random.ts";
import { dropFromPageCache } from "../../scripts/page-cache.ts";

const dir = mkdtempSync(join(tmpdir(), "quarry-page-advice-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const libc = openLibc({
  mincore: { args: [FFIType.ptr, FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  getpagesize: { args: [], returns: FFIType.i32 },
});
const PAGE = libc!.symbols.getpagesize();

/** Which pages of the mapped view are in memory. */
function resident(view: Uint8Array): boolean[] {
  const pages = Math.ceil(view.byteLength / PAGE);
  const flags = new Uint8Array(pages);
  expect(libc!.symbols.mincore(ptr(view), view.byteLength, ptr(flags))).toBe(0);
  return [...flags].map((flag) => (flag & 1) === 1);
}

function writeRandomFile(name: string, bytes: number, seed: number): string {
  const random = uniform(seed);
  const path = join(dir, name);
  const fd = openSync(path, "w");
  writeSync(fd, Uint8Array.from({ length: bytes }, () => Math.floor(random() * 256)));
  fsyncSync(fd); // written back, so that its pages are clean and can be dropped
  closeSync(fd);
  return path;
}

test("willNeed reads in the pages asked for, and only those", async () => {
  const path = writeRandomFile("pages.bin", 256 * PAGE, 1);
  dropFromPageCache(path);
  const view = Bun.mmap(path, { shared: false });
  expect(resident(view).filter(Boolean).length).toBe(0);
  // Page-aligned or not, each range's pages; a range inside one page asks for that page.
  const asked = [3, 4, 5, 40, 200];
  willNeed(view, 3 * PAGE + 17, 6 * PAGE - 1);
  willNeed(view, 40 * PAGE + 100, 40 * PAGE + 612);
  willNeed(view, 200 * PAGE, 201 * PAGE);
  const deadline = performance.now() + 5_000;
  while (asked.some((page) => !resident(view)[page]) && performance.now() < deadline) await Bun.sleep(5);
  const inMemory = resident(view);
  expect(asked.every((page) => inMemory[page])).toBe(true);
  // The OS may read a little around what was asked (read-ahead), never the whole file.
  expect(inMemory.filter(Boolean).length).toBeLessThan(128);
});

test("inMemory tells the pages in memory from those that are not, without reading them in", () => {
  const path = writeRandomFile("resident.bin", 64 * PAGE, 3);
  dropFromPageCache(path);
  const view = Bun.mmap(path, { shared: false });
  expect(inMemory(view, 10 * PAGE + 5)).toBe(false);
  expect(resident(view)[10]).toBe(false); // asking did not read it
  expect(view[10 * PAGE + 5]).toBeGreaterThanOrEqual(0); // reading does
  expect(inMemory(view, 10 * PAGE + 5)).toBe(true);
  expect(inMemory(view, 10 * PAGE)).toBe(true);
  // A page far from it: the OS reads some pages around a fault, not a whole file away.
  expect(inMemory(view, 63 * PAGE + 1)).toBe(resident(view)[63]);
});

test("re-scoring candidates whose codes are out of memory gives the scores it gives in memory", () => {
  const dimension = 512;
  const count = 8192; // 4 MB of codes
  const random = uniform(7);
  const path = writeRandomFile("codes.i8", count * dimension, 2);
  const scales = Float32Array.from({ length: count }, () => random() / 127);
  const query = Float32Array.from({ length: dimension }, () => random() - 0.5);
  const candidates = Array.from({ length: 1000 }, () => Math.floor(random() * count));
  const score = () => {
    const bytes = Bun.mmap(path, { shared: false });
    const best = new TopK(100);
    const scan = new CodeScan(query, new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), scales, best);
    scan.addEach(candidates);
    scan.flush();
    return best.sorted();
  };
  dropFromPageCache(path);
  const fromDisk = score();
  const inMemory = score();
  expect(fromDisk.length).toBe(100);
  expect(fromDisk).toEqual(inMemory);
});

test("a vector segment searched with its files out of memory finds what it finds in memory, filtered or not", () => {
  const dimension = 64;
  const vectors = unitVectors(6010, dimension, 9, 30);
  const segmentDir = join(dir, "vector");
  writeVectorSegment(segmentDir, vectors.slice(0, 6000).map((vector, i) => ({ rowid: i + 1, vector })), dimension, undefined, { lists: 24 });
  const files = readdirSync(segmentDir).map((name) => join(segmentDir, name));
  for (const path of files) {
    const fd = openSync(path, "r+");
    fsyncSync(fd);
    closeSync(fd);
  }
  const eligible = newMask(6001);
  for (let rowid = 1; rowid <= 6000; rowid += 3) eligible[rowid] = 1;
  const searchAll = () => {
    const segment = VectorSegment.open(segmentDir, dimension, { visitedShare: 0.3, minVisited: 1000 });
    return vectors.slice(6000).flatMap((query) => [
      segment.search(query, null, 0, 20, allShards(2)),
      segment.search(query, eligible, 2000, 20, allShards(2)),
    ]);
  };
  for (const path of files) dropFromPageCache(path);
  const fromDisk = searchAll();
  const inMemory = searchAll();
  expect(fromDisk.every((hits) => hits.length === 20)).toBe(true);
  expect(fromDisk).toEqual(inMemory);
});
