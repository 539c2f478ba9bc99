// Search metering with plan limits on: one query per call whatever the mode, none for refused calls,
// and the 429 shape once the trial allowance (500) is used up.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, search, searchRaw, type SearchKb } from "./search-helpers.ts";

let server: TestServer;
let kb: SearchKb;

beforeAll(async () => {
  // The rate limiter's clock moves a second per request: this is about the allowance, not the rate.
  let rateClockMs = 0;
  server = await startTestServer({ rateLimitClock: () => (rateClockMs += 1000) });
  kb = await createKb(server);
  await addDocs(server, kb, [{ name: "refunds", text: "Refunds are issued within 14 days of a return." }]);
});
afterAll(() => server.stop());

async function queriesUsed(): Promise<number> {
  const res = await server.request("GET", "/v1/usage", { token: kb.account.apiKey });
  return res.body.data.usage.search_queries;
}

test("each search call counts one query; refused calls count none", async () => {
  const before = await queriesUsed();
  for (const mode of ["vector", "keyword", "hybrid"]) await search(server, kb, { query: "refund", mode });
  expect(await queriesUsed()).toBe(before + 3);
  expect((await searchRaw(server, kb, { query: "" })).status).toBe(400);
  expect((await searchRaw(server, kb, { query: "x", filter: { a: { $bad: 1 } } })).status).toBe(400);
  const missing = await server.request("POST", "/v1/knowledge-bases/kb_0000000000000000000000000a/search", {
    token: kb.account.apiKey,
    body: { query: "refund" },
  });
  expect(missing.status).toBe(404);
  expect(await queriesUsed()).toBe(before + 3);
});

test("usage reports the mode, embedding tokens and chunks searched", async () => {
  const vector = await search(server, kb, { query: "when are refunds issued" });
  expect(vector.usage).toMatchObject({ search_mode: "vector", chunks_searched: 1, rerank_applied: false, rerank_calls: 0 });
  expect(vector.usage.embedding_tokens).toBeGreaterThan(0);
  const keyword = await search(server, kb, { query: "when are refunds issued", mode: "keyword" });
  expect(keyword.usage).toMatchObject({ search_mode: "keyword", chunks_searched: 1, embedding_tokens: 0 });
});

test("the trial's 501st search is 429 USAGE_LIMIT_EXCEEDED {limit, current_usage, plan, requested}", async () => {
  let used = await queriesUsed();
  while (used < 500) {
    const batch = Math.min(25, 500 - used);
    const statuses = await Promise.all(Array.from({ length: batch }, () => searchRaw(server, kb, { query: "refund", mode: "keyword" })));
    expect(statuses.map((r) => r.status)).toEqual(Array(batch).fill(200));
    used += batch;
  }
  const res = await searchRaw(server, kb, { query: "refund", mode: "keyword" });
  expect(res.status).toBe(429);
  expect(res.body.error.code).toBe("USAGE_LIMIT_EXCEEDED");
  expect(res.body.error.details).toEqual({ limit: 500, current_usage: 500, plan: "trial", requested: 1 });
  expect(res.body.error.message).toMatch(/search/i);
  expect(await queriesUsed()).toBe(500);
});
