// After a restart, a knowledge base with a long backlog of changes beyond its segment (QUARRY_SEGMENT_MIN_CHANGES
// or more) is taken into its index right away (index-cache.ts warmBacklogs), not by its first search.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, search, segments, type TextDoc } from "./search-helpers.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-backlog-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const notes = (from: number, count: number): TextDoc[] =>
  Array.from({ length: count }, (_, i) => ({ name: `note-${from + i}`, text: `Field note ${from + i}: a dipper bobbed on stone ${from + i}.` }));

/** No segment is built from changes that stop coming for an hour: the backlog stays a backlog. */
const start = (quietMs = 3_600_000): Promise<TestServer> =>
  startTestServer({ dataDir, env: { QUARRY_SEGMENT_MIN_CHANGES: "5", QUARRY_LIMITS: "off" }, segmentQuietMs: quietMs });

function newestSegmentChunks(kbId: string): number {
  const names = segments(dataDir, kbId);
  return names.length === 0 ? 0 : JSON.parse(readFileSync(join(dataDir, "indexes", kbId, names.at(-1)!, "manifest.json"), "utf8")).chunkCount;
}

test("a backlog of at least QUARRY_SEGMENT_MIN_CHANGES is taken in right after a start, before any search", async () => {
  // A segment of 116-120 chunks (built as they come, the rest folded once they stop coming for a second if
  // they are 5 or more), then 5 more changes: with what may be left, 5-9 changes beyond the segment, under
  // 10 % of it, so they stay in the log.
  let server = await start(1_000);
  const kb = await createKb(server);
  await addDocs(server, kb, notes(0, 120));
  let settled = 0;
  for (let waited = 0, seen = -1; waited < 30_000 && !(settled >= 116 && settled === seen); waited += 1_500) {
    seen = settled;
    await Bun.sleep(1_500);
    settled = newestSegmentChunks(kb.kbId);
  }
  expect(settled).toBeGreaterThanOrEqual(116);
  await server.stop();
  server = await start();
  await addDocs(server, kb, notes(120, 5));
  await server.stop();

  server = await start();
  try {
    for (let waited = 0; !server.server.ctx.searchIndexes.has(kb.kbId) && waited < 5_000; waited += 50) await Bun.sleep(50);
    expect(server.server.ctx.searchIndexes.has(kb.kbId)).toBe(true);
    const found = await search(server, kb, { query: "dipper stone 123", mode: "keyword", top_k: 1 });
    expect(found.results[0].document_id).toBe(kb.docs["note-123"]);
  } finally {
    await server.stop();
  }
});

test("a knowledge base with fewer changes beyond its segment waits for its first search", async () => {
  const server = await start();
  try {
    const kb = await createKb(server);
    await addDocs(server, kb, notes(200, 2));
    await server.stop();
    const again = await start();
    try {
      await Bun.sleep(1_000);
      expect(again.server.ctx.searchIndexes.has(kb.kbId)).toBe(false);
      const found = await search(again, kb, { query: "dipper stone 201", mode: "keyword", top_k: 1 });
      expect(found.results[0].document_id).toBe(kb.docs["note-201"]);
    } finally {
      await again.stop();
    }
  } catch (error) {
    await server.stop().catch(() => {});
    throw error;
  }
});
