// A document is searchable as soon as it is ready, even right after a bulk import: the first search of a
// knowledge base whose backlog of changes takes several of the index's 20 ms slices to apply waits for
// all of them (kb-index.ts caughtUp), while other requests run between the slices.
import { afterAll, expect, test } from "bun:test";
import { startTestServer } from "../helpers/server.ts";
import { addDocs, createKb, search, type TextDoc } from "./search-helpers.ts";

const server = await startTestServer({ env: { QUARRY_LIMITS: "off", QUARRY_WORKERS: "2" } });
afterAll(() => server.stop());

const WORDS = ["harbor", "lantern", "meadow", "copper", "violin", "glacier", "orchard", "compass", "granite", "falcon", "saddle", "thistle"];

test("the first search after 300 documents became ready finds the last one written", async () => {
  const kb = await createKb(server);
  // ~400 words each: applying one takes ~0.2 ms, so the backlog is several slices.
  const docs: TextDoc[] = Array.from({ length: 300 }, (_, d) => ({
    name: `doc-${d}`,
    text: `Marker zq${d}x. ` + Array.from({ length: 400 }, (_, w) => WORDS[(d * 7 + w * 5) % WORDS.length]).join(" ") + ".",
  }));
  await addDocs(server, kb, docs);

  // The chunk written last is the last change in the log.
  const last = server.server.ctx.db
    .query<{ document_id: string }, [string]>("SELECT document_id FROM chunks WHERE kb_id = ? ORDER BY rowid DESC LIMIT 1")
    .get(kb.kbId)!.document_id;
  const name = Object.entries(kb.docs).find(([, id]) => id === last)![0];
  const data = await search(server, kb, { query: `zq${name.slice(4)}x`, mode: "keyword", rerank: false, top_k: 1 });
  expect(data.results.map((r) => r.document_id)).toEqual([last]);
});
