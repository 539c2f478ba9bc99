// Changes that stop coming are folded into a segment even when they are few beside the knowledge base's
// size (index-worker.ts): a restart, or a reopening under the memory budget, then replays fewer than
// QUARRY_SEGMENT_MIN_CHANGES changes from the log before its first search answers.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, search, segments, type TextDoc } from "./search-helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_SEGMENT_MIN_CHANGES: "5", QUARRY_LIMITS: "off" }, segmentQuietMs: 1_000 });
});
afterAll(() => server.stop());

const notes = (from: number, count: number): TextDoc[] =>
  Array.from({ length: count }, (_, i) => ({ name: `note-${from + i}`, text: `Field note ${from + i}: the heron waited by reed bed ${from + i}.` }));

/** The chunk count of the knowledge base's newest segment once it reaches `chunks` (polled up to 30 s). */
async function segmentHolding(kbId: string, chunks: number): Promise<number> {
  let newest = 0;
  for (let waited = 0; waited < 30_000; waited += 200) {
    const names = segments(server.dataDir, kbId);
    if (names.length > 0) newest = JSON.parse(readFileSync(join(server.dataDir, "indexes", kbId, names.at(-1)!, "manifest.json"), "utf8")).chunkCount;
    if (newest >= chunks) break;
    await Bun.sleep(200);
  }
  return newest;
}

/** The newest segment's chunk count once it holds at least `chunks` and no newer one came for 3 s (the quiet time is 1 s). */
async function settledSegment(kbId: string, chunks: number): Promise<number> {
  let newest = await segmentHolding(kbId, chunks);
  for (let still = 0; still < 3_000; still += 200) {
    await Bun.sleep(200);
    const now = await segmentHolding(kbId, 0);
    if (now !== newest) [newest, still] = [now, 0];
  }
  return newest;
}

test("a few changes after the last segment, under 10 % of it, get a segment of their own once no more come", async () => {
  const kb = await createKb(server);
  await addDocs(server, kb, notes(0, 60));
  // Segments are made while the 60 come in (5 changes make one for a small knowledge base): the last of them
  // may be left out, fewer than QUARRY_SEGMENT_MIN_CHANGES, waiting for more (on a busy machine 1 of 60 was).
  const segment = await settledSegment(kb.kbId, 60 - 4);
  const waiting = 60 - segment;
  // Enough more to make QUARRY_SEGMENT_MIN_CHANGES changes, which is less than 10 % of the segment's 56-60 chunks.
  await addDocs(server, kb, notes(60, 5 - waiting));
  expect(await segmentHolding(kb.kbId, 65 - waiting)).toBe(65 - waiting);
  const last = 64 - waiting;
  const found = await search(server, kb, { query: `heron reed bed ${last}`, mode: "keyword", top_k: 1 });
  expect(found.results[0].document_id).toBe(kb.docs[`note-${last}`]);
});
