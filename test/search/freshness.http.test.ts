// A document is searchable as soon as it is ready, even right after a bulk import, and by vector as well
// as by keyword: every one ingested while searches ran is found first by its own text (the index once gave
// chunks written during one of its catch-up slices zero vectors, kb-index.ts). Documents that become
// ready are taken into their knowledge base's index in the background (index-cache.ts warm), so its first
// search need not apply them; after a restart, the first search of a knowledge base whose backlog of
// changes takes several of the index's 20 ms slices to apply waits for all of them (kb-index.ts caughtUp),
// while other requests run between the slices.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";
import { addDocs, createKb, search, type TextDoc } from "./search-helpers.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-freshness-"));
const env = { QUARRY_LIMITS: "off", QUARRY_WORKERS: "2" };
let server: TestServer = await startTestServer({ env, dataDir });
afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const WORDS = ["harbor", "lantern", "meadow", "copper", "violin", "glacier", "orchard", "compass", "granite", "falcon", "saddle", "thistle"];

test("every document ingested while searches run is then found first by its own text, by vector", async () => {
  const kb = await createKb(server);
  const VOCABULARY = ["volcano", "symphony", "algebra", "pastry", "satellite", "glacier", "parliament", "enzyme", "lighthouse", "tornado", "saxophone", "cathedral", "microscope", "vineyard", "submarine", "carnival"];
  // Each document a different 10-word selection, so that its own text is its nearest neighbour.
  const docs: TextDoc[] = Array.from({ length: 80 }, (_, d) => ({
    name: `doc-${d}`,
    text: Array.from({ length: 10 }, (_, w) => VOCABULARY[(d * 7 + w * w * 3 + ((d * w) % 5)) % VOCABULARY.length]).join(" ") + ` item ${d}.`,
  }));
  let ingesting = true;
  const searching = (async () => {
    while (ingesting) await search(server, kb, { query: "volcano glacier", mode: "vector", rerank: false, top_k: 5 });
  })();
  try {
    await addDocs(server, kb, docs);
  } finally {
    ingesting = false;
    await searching;
  }
  const missed: string[] = [];
  for (const doc of docs) {
    const { results } = await search(server, kb, { query: doc.text, mode: "vector", rerank: false, top_k: 1 });
    if (results[0]?.document_id !== kb.docs[doc.name]) missed.push(doc.name);
  }
  expect(missed).toEqual([]);
});

test("after 300 documents became ready, their index has taken them in before any search, and after a restart the first search applies them all", async () => {
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
  const findLast = async () =>
    (await search(server, kb, { query: `zq${name.slice(4)}x`, mode: "keyword", rerank: false, top_k: 1 })).results.map((r) => r.document_id);

  await until(() => server.server.ctx.searchIndexes.has(kb.kbId), "the knowledge base's index to be loaded without a search");
  expect(await findLast()).toEqual([last]);

  await server.stop();
  server = await startTestServer({ env, dataDir });
  expect(server.server.ctx.searchIndexes.has(kb.kbId)).toBe(false);
  expect(await findLast()).toEqual([last]);
});
