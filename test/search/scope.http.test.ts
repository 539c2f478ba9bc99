// What a search may return: only chunks of ready documents of that knowledge base, up to date with
// additions, replacements, metadata changes and deletions.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, docNames, search, searchRaw, type SearchKb } from "./search-helpers.ts";

let server: TestServer;
let kb: SearchKb;
let sibling: SearchKb;
let stranger: SearchKb;
const MODES = ["vector", "keyword", "hybrid"] as const;

const whale = { name: "whale", text: "The blue whale is the largest animal ever known; it feeds on krill in cold oceans." };
const glacier = { name: "glacier", text: "Glaciers carve valleys as the ice slowly flows downhill under its own weight." };

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
  kb = await createKb(server);
  sibling = await createKb(server, kb.account);
  stranger = await createKb(server);
  await addDocs(server, kb, [whale, glacier]);
  await addDocs(server, sibling, [{ name: "sibling-whale", text: whale.text }]);
  await addDocs(server, stranger, [{ name: "stranger-whale", text: whale.text }]);
});
afterAll(() => server.stop());

async function foundIn(target: SearchKb, query: string): Promise<string[][]> {
  return Promise.all(MODES.map(async (mode) => docNames(target, (await search(server, target, { query, mode })).results)));
}

test("no chunk of another knowledge base, of the same account or another, is returned", async () => {
  for (const names of await foundIn(kb, "blue whale krill")) {
    expect(names[0]).toBe("whale");
    expect(names.every((n) => n === "whale" || n === "glacier")).toBe(true);
  }
  const data = await search(server, kb, { query: "blue whale krill", mode: "keyword" });
  expect(data.usage.chunks_searched).toBe(2);
});

test("a document becomes searchable when it is ready", async () => {
  await addDocs(server, kb, [{ name: "volcano", text: "Magma erupts from the volcano as lava and ash." }]);
  for (const names of await foundIn(kb, "magma lava volcano")) expect(names[0]).toBe("volcano");
});

test("a document that is not ready is not searchable, even with its chunks still stored", async () => {
  const db = new Database(join(server.dataDir, "quarry.db"));
  try {
    // What a replacement looks like while it is processed: the old chunks stay until the swap.
    db.query("UPDATE documents SET status = 'embedding' WHERE id = ?").run(kb.docs.glacier);
    for (const names of await foundIn(kb, "glacier ice valleys")) expect(names).not.toContain("glacier");
    db.query("UPDATE documents SET status = 'ready' WHERE id = ?").run(kb.docs.glacier);
    for (const names of await foundIn(kb, "glacier ice valleys")) expect(names[0]).toBe("glacier");
  } finally {
    db.close();
  }
});

test("a replaced document is found by its new text only", async () => {
  const file = new File(["Penguins waddle across Antarctic sea ice and dive for fish."], "penguin.txt", { type: "text/plain" });
  const res = await server.request("PUT", `/v1/knowledge-bases/${kb.kbId}/documents/${kb.docs.glacier}`, { token: kb.account.apiKey, form: { file } });
  expect(res.status).toBe(202);
  expect((await waitForDocument(server, kb.account.apiKey, kb.kbId, kb.docs.glacier)).status).toBe("ready");
  for (const names of await foundIn(kb, "penguins antarctic")) expect(names[0]).toBe("glacier");
  const old = await search(server, kb, { query: "glaciers carve valleys", mode: "keyword" });
  expect(docNames(kb, old.results)).not.toContain("glacier");
});

test("a deleted document, or knowledge base, is gone from search", async () => {
  const res = await server.request("DELETE", `/v1/knowledge-bases/${kb.kbId}/documents/${kb.docs.whale}`, { token: kb.account.apiKey });
  expect(res.status).toBe(200);
  for (const names of await foundIn(kb, "blue whale krill")) expect(names).not.toContain("whale");
  for (const names of await foundIn(sibling, "blue whale krill")) expect(names).toEqual(["sibling-whale"]);
  await server.request("DELETE", `/v1/knowledge-bases/${sibling.kbId}`, { token: kb.account.apiKey });
  expect((await searchRaw(server, sibling, { query: "whale" })).status).toBe(404);
});

test("an empty knowledge base returns no results", async () => {
  const empty = await createKb(server);
  for (const mode of MODES) {
    const data = await search(server, empty, { query: "anything at all", mode });
    expect(data.results).toEqual([]);
    expect(data.usage.chunks_searched).toBe(0);
  }
});
