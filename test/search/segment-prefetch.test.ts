// Paging a segment's mapped files in ahead of its searches (search/segment-prefetch.ts, prefetch-thread.ts):
// the pages of a freshly mapped file, which nothing on this thread reads, become resident in this process,
// and a range that is no longer mapped is skipped without harm. Real files, real mappings, the real thread.
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

/** This process's resident pages of mapped files, in MB. */
function residentFileMb(): number {
  return Number(/RssFile:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024;
}

function mapped(name: string, megabytes: number): { bytes: Uint8Array; file: SharedFile } {
  const path = join(dir, name);
  writeFileSync(path, new Uint8Array(megabytes * MB).fill(7));
  const bytes = mapFile(path);
  return { bytes, file: { path, address: ptr(bytes), length: bytes.byteLength } };
}

async function waitForResident(atLeastMb: number): Promise<number> {
  for (let waited = 0; waited < 10_000 && residentFileMb() < atLeastMb; waited += 50) await Bun.sleep(50);
  return residentFileMb();
}

test.skipIf(process.platform !== "linux")("a mapped file's pages become resident without this thread reading them", async () => {
  const { bytes, file } = mapped("codes.i8", 48);
  const before = residentFileMb();
  prefetch.pageIn([file]);
  expect(await waitForResident(before + 44)).toBeGreaterThanOrEqual(before + 44);
  expect(bytes[bytes.length - 1]).toBe(7);
});

test.skipIf(process.platform !== "linux")("a range no longer mapped is skipped, and later files are still paged in", async () => {
  // An unmapped, page-aligned range: the first 16 MB of the address space are never mapped.
  const gone: SharedFile = { path: join(dir, "gone"), address: 1 * MB, length: 8 * MB };
  const { bytes, file } = mapped("postings", 24);
  const before = residentFileMb();
  prefetch.pageIn([gone]);
  prefetch.pageIn([file]);
  expect(await waitForResident(before + 20)).toBeGreaterThanOrEqual(before + 20);
  expect(bytes[0]).toBe(7);
});
