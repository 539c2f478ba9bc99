// Paging a segment's mapped files in ahead of its searches (search/segment-prefetch.ts, prefetch-thread.ts):
// the pages of a freshly mapped file, which nothing on this thread reads, become resident in this process;
// a range that is no longer mapped is skipped without harm; past the budget the largest files are left.
// Real files, real mappings, the real thread; residency is read per mapping from /proc/self/smaps.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ptr } from "bun:ffi";
import { mapFile, type SharedFile } from "../../src/search/file-mapping.ts";
import { SegmentPrefetch } from "../../src/search/segment-prefetch.ts";

const dir = mkdtempSync(join(tmpdir(), "quarry-prefetch-"));
const prefetch = new SegmentPrefetch();
afterAll(() => {
  prefetch.stop();
  rmSync(dir, { recursive: true, force: true });
});

const MB = 1 << 20;

/** Resident MB of the mapping that starts at the file's address. */
function residentMb(file: SharedFile): number {
  const smaps = readFileSync("/proc/self/smaps", "utf8");
  const start = smaps.indexOf(`${file.address.toString(16)}-`);
  if (start < 0) throw new Error(`no mapping at ${file.address.toString(16)}`);
  return Number(/\nRss:\s+(\d+) kB/.exec(smaps.slice(start))![1]) / 1024;
}

function mapped(name: string, megabytes: number): { bytes: Uint8Array; file: SharedFile } {
  const path = join(dir, name);
  writeFileSync(path, new Uint8Array(megabytes * MB).fill(7));
  const bytes = mapFile(path);
  return { bytes, file: { path, address: ptr(bytes), length: bytes.byteLength } };
}

async function waitForResident(file: SharedFile, megabytes: number): Promise<number> {
  for (let waited = 0; waited < 10_000 && residentMb(file) < megabytes; waited += 50) await Bun.sleep(50);
  return residentMb(file);
}

test.skipIf(process.platform !== "linux")("a mapped file's pages become resident without this thread reading them", async () => {
  const { bytes, file } = mapped("codes.i8", 48);
  expect(residentMb(file)).toBeLessThan(1);
  prefetch.pageIn([file]);
  expect(await waitForResident(file, 48)).toBe(48);
  expect(bytes[bytes.length - 1]).toBe(7);
});

test.skipIf(process.platform !== "linux")("a range no longer mapped is skipped, and later files are still paged in", async () => {
  // An unmapped, page-aligned range: the first 16 MB of the address space are never mapped.
  const gone: SharedFile = { path: join(dir, "gone"), address: 1 * MB, length: 8 * MB };
  const { bytes, file } = mapped("postings", 24);
  prefetch.pageIn([gone]);
  prefetch.pageIn([file]);
  expect(await waitForResident(file, 24)).toBe(24);
  expect(bytes[0]).toBe(7);
});

test.skipIf(process.platform !== "linux")("past the budget the largest files are left to be read as searches touch them", async () => {
  const small = new SegmentPrefetch(16 * MB);
  try {
    const lists = mapped("lists", 8);
    const vectors = mapped("vectors", 40);
    small.pageIn([vectors.file, lists.file]);
    expect(await waitForResident(lists.file, 8)).toBe(8);
    await Bun.sleep(500);
    expect(residentMb(vectors.file)).toBeLessThan(1);
    expect(lists.bytes[0] + vectors.bytes[0]).toBe(14);
  } finally {
    small.stop();
  }
});
