// Reranking with a real (tiny, generated) cross-encoder: applied when installed and asked for, scores are
// its probabilities, thresholds apply after it, and a failing or slow reranker never fails the search.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generateTestModels } from "../../scripts/gen-test-models.ts";
import type { Reranker } from "../../src/models/types.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, search, type SearchKb } from "./search-helpers.ts";

const TIMEOUT_MS = 300;
let server: TestServer;
let kb: SearchKb;
let reranker: Reranker;

const paragraphs = Array.from(
  { length: 40 },
  (_, i) => `Section ${i}: the library index lists ${i} books about water flow, heat and pressure in wing surface tests.`,
);

beforeAll(async () => {
  server = await startTestServer({
    env: {
      QUARRY_LIMITS: "off",
      QUARRY_MODELS_DIR: generateTestModels(),
      QUARRY_RERANK_MODEL: "tiny-reranker",
      QUARRY_RERANK_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  });
  reranker = server.server.ctx.models.reranker!;
  kb = await createKb(server);
  await addDocs(server, kb, [{ name: "manual", text: paragraphs.join("\n\n") }]);
});
afterAll(() => server.stop());

/** Runs fn with the reranker's score() replaced; records the passages each call received. */
async function withScore<T>(score: Reranker["score"], fn: (calls: string[][]) => Promise<T>): Promise<T> {
  const original = reranker.score;
  const calls: string[][] = [];
  reranker.score = (query, passages) => {
    calls.push(passages);
    return score.call(reranker, query, passages);
  };
  try {
    return await fn(calls);
  } finally {
    reranker.score = original;
  }
}

test("the pool of max(20, 3 × top_k) candidates is reranked; scores are the reranker's probabilities", async () => {
  for (const mode of ["vector", "keyword", "hybrid"]) {
    for (const topK of [3, 10]) {
      const body = { query: "water flow in wing tests", mode, top_k: topK };
      const [data, calls] = await withScore(reranker.score, async (calls) => [await search(server, kb, body), calls] as const);
      expect(data.usage.rerank_applied).toBe(true);
      expect(data.usage.rerank_calls).toBe(1);
      expect(calls).toHaveLength(1);
      const chunks = data.usage.chunks_searched;
      expect(calls[0].length).toBe(Math.min(chunks, Math.max(20, 3 * topK)));
      const expected = await reranker.score(body.query, calls[0]);
      const best = [...expected].sort((a, b) => b - a).slice(0, topK);
      expect(data.results.map((r) => r.score)).toEqual(best);
      for (const r of data.results) expect(r.score >= 0 && r.score <= 1).toBe(true);
    }
  }
});

test("rerank: false skips the reranker", async () => {
  await withScore(reranker.score, async (calls) => {
    const data = await search(server, kb, { query: "heat and pressure", rerank: false });
    expect(data.usage).toMatchObject({ rerank_applied: false, rerank_calls: 0 });
    expect(calls).toHaveLength(0);
  });
});

test("score_threshold applies to the reranked score", async () => {
  const all = await search(server, kb, { query: "library books", mode: "keyword", top_k: 20 });
  const cut = all.results[Math.floor(all.results.length / 2)].score;
  const kept = await search(server, kb, { query: "library books", mode: "keyword", top_k: 20, score_threshold: cut });
  expect(kept.usage.rerank_applied).toBe(true);
  expect(kept.results.map((r) => r.chunk_id)).toEqual(all.results.filter((r) => r.score >= cut).map((r) => r.chunk_id));
});

test("a failing or too slow reranker leaves the first-stage results, rerank_applied false", async () => {
  const body = { query: "pressure in wing surface tests", mode: "hybrid", top_k: 5 };
  const unreranked = await search(server, kb, { ...body, rerank: false });
  const failing = await withScore(() => Promise.reject(new Error("reranker crashed")), () => search(server, kb, body));
  const slow = await withScore(
    (query, passages) => Bun.sleep(TIMEOUT_MS * 3).then(() => passages.map(() => 1)),
    () => search(server, kb, body),
  );
  const wrongLength = await withScore(() => Promise.resolve([0.5]), () => search(server, kb, body));
  for (const data of [failing, slow, wrongLength]) {
    expect(data.usage).toMatchObject({ rerank_applied: false, rerank_calls: 0 });
    expect(data.results).toEqual(unreranked.results);
  }
});
