// BM25 over a segment with many of its chunks deleted (tombstoned until the next rebuild): the statistics
// must stay consistent, so that a term found in more chunks than are left still scores its matches.
// Through the HTTP API with the real model; the build threshold lets one segment form, then stay.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, docNames, search, waitForSegment, type SearchKb, type TextDoc } from "./search-helpers.ts";

/** 45 documents make the first segment; the 35 deletions after it stay below the next build's threshold. */
const ENV = { QUARRY_SEGMENT_MIN_CHANGES: "45", QUARRY_LIMITS: "off" };
const NAMED: TextDoc[] = [
  { name: "zebra-apple-mango", text: "zebra apple mango" },
  { name: "kiwi-apple-mango", text: "kiwi apple mango" },
  { name: "kiwi-grape-mango", text: "kiwi grape mango" },
  { name: "kiwi-grape-lemon", text: "kiwi grape lemon" },
  { name: "zebra-lemon", text: "zebra zebra lemon" },
];
const FILLERS: TextDoc[] = Array.from({ length: 40 }, (_, i) => ({ name: `filler-${i}`, text: `kiwi apple filler${i}` }));

let dataDir: string;
let server: TestServer;
let kb: SearchKb;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "quarry-segment-stats-"));
  server = await startTestServer({ dataDir, env: ENV });
  kb = await createKb(server);
  await addDocs(server, kb, [...NAMED, ...FILLERS]);
  await waitForSegment(dataDir, kb.kbId);
  for (const filler of FILLERS.slice(5)) {
    const res = await server.request("DELETE", `/v1/knowledge-bases/${kb.kbId}/documents/${kb.docs[filler.name]}`, { token: kb.account.apiKey });
    expect(res.status).toBe(200);
  }
});

afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test("after most of a segment's chunks are deleted, every match of a common term is still found and scored", async () => {
  for (const mode of ["keyword", "hybrid"]) {
    const data = await search(server, kb, { query: "kiwi apple", mode, alpha: 0, top_k: 20, rerank: false });
    expect(data.usage.chunks_searched).toBe(10);
    const names = docNames(kb, data.results);
    expect({ mode, names: [...names].sort() }).toEqual({
      mode,
      names: ["filler-0", "filler-1", "filler-2", "filler-3", "filler-4", "kiwi-apple-mango", "kiwi-grape-lemon", "kiwi-grape-mango", "zebra-apple-mango"],
    });
    for (const result of data.results) expect({ mode, positive: result.score > 0 }).toEqual({ mode, positive: true });
  }
  const best = await search(server, kb, { query: "kiwi apple mango", mode: "keyword", top_k: 3, rerank: false });
  expect(docNames(kb, best.results)[0]).toBe("kiwi-apple-mango");
});
