// A query asked again in the same knowledge base reuses its embedding (search/query-embeddings.ts): the
// same results and usage, no second model call; never across knowledge bases, and never in keyword mode.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { loadConfig, ConfigError } from "../../src/config.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, search, TOPICS, type SearchKb } from "./search-helpers.ts";

let server: TestServer;
let kb: SearchKb;
let otherKb: SearchKb;

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
  kb = await createKb(server);
  otherKb = await createKb(server, kb.account);
  await addDocs(server, kb, TOPICS);
  await addDocs(server, otherKb, TOPICS);
});
afterAll(() => server.stop());

const counts = (s: TestServer = server) => {
  const { hits, misses } = s.server.ctx.queryEmbeddings;
  return { hits, misses };
};

test("the same query in the same knowledge base is embedded once, with the same results and usage", async () => {
  const before = counts();
  const query = "how do plants turn sunlight into glucose";
  const first = await search(server, kb, { query });
  expect(counts()).toEqual({ hits: before.hits, misses: before.misses + 1 });
  const again = await search(server, kb, { query });
  expect(counts()).toEqual({ hits: before.hits + 1, misses: before.misses + 1 });
  expect(again.results).toEqual(first.results);
  expect(again.usage).toEqual(first.usage);
  expect(again.usage.embedding_tokens).toBeGreaterThan(0);

  // hybrid mode embeds the same text: reused too
  const hybrid = await search(server, kb, { query, mode: "hybrid" });
  expect(counts()).toEqual({ hits: before.hits + 2, misses: before.misses + 1 });
  expect(hybrid.usage.embedding_tokens).toBe(first.usage.embedding_tokens);

  // keyword mode makes no embedding call at all
  const keyword = await search(server, kb, { query, mode: "keyword" });
  expect(keyword.usage.embedding_tokens).toBe(0);
  expect(counts()).toEqual({ hits: before.hits + 2, misses: before.misses + 1 });
});

test("another knowledge base embeds the query itself, even of the same account", async () => {
  const query = "when are income tax returns due";
  await search(server, kb, { query });
  const before = counts();
  const other = await search(server, otherKb, { query });
  expect(counts()).toEqual({ hits: before.hits, misses: before.misses + 1 });
  expect(other.results[0].document_id).toBe(otherKb.docs.tax);
});

test("concurrent searches for a query being embedded share that embedding", async () => {
  const before = counts();
  const query = "who scored the late goal in the football match";
  const results = await Promise.all(Array.from({ length: 4 }, () => search(server, kb, { query })));
  expect(counts()).toEqual({ hits: before.hits + 3, misses: before.misses + 1 });
  for (const data of results) expect(data.results).toEqual(results[0].results);
});

test("the least recently used query is dropped first; 0 entries keeps none", async () => {
  const small = await startTestServer({ env: { QUARRY_LIMITS: "off", QUARRY_QUERY_CACHE_ENTRIES: "2" } });
  try {
    const smallKb = await createKb(small);
    await addDocs(small, smallKb, TOPICS.slice(0, 2));
    for (const query of ["volcano", "bread", "volcano", "glucose", "bread", "volcano"]) await search(small, smallKb, { query });
    // volcano, bread: missed; volcano: kept; glucose: missed, drops bread; bread: missed, drops volcano; volcano: missed
    expect(counts(small)).toEqual({ hits: 1, misses: 5 });
    expect(small.server.ctx.queryEmbeddings.size).toBe(2);
  } finally {
    await small.stop();
  }
  const none = await startTestServer({ env: { QUARRY_LIMITS: "off", QUARRY_QUERY_CACHE_ENTRIES: "0" } });
  try {
    const noneKb = await createKb(none);
    await addDocs(none, noneKb, TOPICS.slice(0, 1));
    for (let i = 0; i < 3; i++) await search(none, noneKb, { query: "volcano" });
    expect(none.server.ctx.queryEmbeddings.size).toBe(0);
    expect(counts(none).hits).toBe(0);
  } finally {
    await none.stop();
  }
});

test("QUARRY_QUERY_CACHE_ENTRIES takes a whole number", () => {
  expect(loadConfig({ QUARRY_QUERY_CACHE_ENTRIES: "0" }).queryCacheEntries).toBe(0);
  expect(loadConfig({}).queryCacheEntries).toBe(1024);
  for (const bad of ["-1", "1.5", "many"]) expect(() => loadConfig({ QUARRY_QUERY_CACHE_ENTRIES: bad })).toThrow(ConfigError);
});
