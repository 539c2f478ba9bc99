// POST /v1/knowledge-bases/{kb_id}/search through the real API on real ingested documents.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, docNames, search, searchRaw, TOPICS, type SearchKb, type TextDoc } from "./search-helpers.ts";

let server: TestServer;
let kb: SearchKb;

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
  kb = await createKb(server);
  await addDocs(server, kb, TOPICS);
});
afterAll(() => server.stop());

describe("each mode finds the obviously right chunk", () => {
  const cases = [
    ["volcano", "lava and ash from an erupting volcano"],
    ["baking", "how do I bake sourdough bread"],
    ["football", "who scored the late goal in the football match"],
    ["photosynthesis", "how do plants turn sunlight into glucose"],
    ["tax", "when are income tax returns due"],
  ] as const;
  for (const mode of ["vector", "keyword", "hybrid"] as const) {
    test(mode, async () => {
      for (const [expected, query] of cases) {
        const data = await search(server, kb, { query, mode });
        expect(docNames(kb, data.results)[0]).toBe(expected);
        expect(data.usage.search_mode).toBe(mode);
      }
    });
  }
});

test("defaults: vector mode, top_k 10, metadata included, no reranker installed", async () => {
  const data = await search(server, kb, { query: "volcano eruption" });
  expect(data.query).toBe("volcano eruption");
  expect(data.results).toHaveLength(TOPICS.length);
  expect(data.usage).toEqual({
    embedding_tokens: expect.any(Number),
    rerank_applied: false,
    rerank_calls: 0,
    chunks_searched: TOPICS.length,
    search_mode: "vector",
  });
  expect(data.usage.embedding_tokens).toBeGreaterThan(0);
  const [top] = data.results;
  expect(top).toEqual({
    chunk_id: expect.stringMatching(/^chk_/),
    document_id: kb.docs.volcano,
    document_name: "volcano",
    text: TOPICS[0].text,
    score: expect.any(Number),
    metadata: { chunk_index: 0, start_page: null, end_page: 1, section_heading: expect.any(String) },
    document_metadata: TOPICS[0].metadata,
  });
});

test("results are ranked by score, every score in [0, 1], in every mode", async () => {
  for (const mode of ["vector", "keyword", "hybrid"]) {
    const data = await search(server, kb, { query: "water crust oven plants tax goal", mode, top_k: 50 });
    const scores = data.results.map((r) => r.score);
    expect(scores.length).toBeGreaterThan(1);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const s of scores) expect(s >= 0 && s <= 1).toBe(true);
  }
});

test("top_k limits the results; include_metadata false leaves metadata out", async () => {
  const data = await search(server, kb, { query: "bread", top_k: 2, include_metadata: false });
  expect(data.results).toHaveLength(2);
  for (const r of data.results) {
    expect(r).not.toHaveProperty("metadata");
    expect(r).not.toHaveProperty("document_metadata");
  }
});

test("keyword mode makes no embedding call; its scores are BM25 mapped by s/(s+10)", async () => {
  const data = await search(server, kb, { query: "sourdough starter", mode: "keyword" });
  expect(data.usage.embedding_tokens).toBe(0);
  expect(docNames(kb, data.results)).toEqual(["baking"]);
  expect(data.results[0].score).toBeGreaterThan(0);
  expect(data.results[0].score).toBeLessThan(1);
});

test("keyword search stems and ignores case and diacritics", async () => {
  const data = await search(server, kb, { query: "ERUPTING Volcáno", mode: "keyword" });
  expect(docNames(kb, data.results)).toEqual(["volcano"]);
});

test("hybrid: a chunk first on both sides scores 1; alpha 0 and 1 run one side only", async () => {
  const both = await search(server, kb, { query: "sourdough bread dough oven", mode: "hybrid" });
  expect(docNames(kb, both.results)[0]).toBe("baking");
  expect(both.results[0].score).toBe(1);
  // Exactly 1 whatever alpha, so score_threshold 1 keeps it.
  for (const alpha of [0.1, 0.3, 0.6, 0.7, 0.9]) {
    const top = await search(server, kb, { query: "sourdough bread dough oven", mode: "hybrid", alpha, score_threshold: 1 });
    expect(top.results.map((r) => r.score)).toEqual([1]);
  }
  const keywordOnly = await search(server, kb, { query: "sourdough", mode: "hybrid", alpha: 0 });
  expect(docNames(kb, keywordOnly.results)).toEqual(["baking"]);
  expect(keywordOnly.usage).toMatchObject({ embedding_tokens: 0, search_mode: "hybrid" });
  const vectorOnly = await search(server, kb, { query: "sourdough", mode: "hybrid", alpha: 1 });
  expect(vectorOnly.results).toHaveLength(TOPICS.length);
  expect(vectorOnly.usage.embedding_tokens).toBeGreaterThan(0);
});

test("hybrid: copies of one text score the same (equal on both sides, so they share their ranks), and a threshold keeps all or none", async () => {
  const copies = await createKb(server, kb.account);
  const text = "The lighthouse keeper recorded the storm surge at dawn. Waves crossed the breakwater twice.";
  await addDocs(server, copies, [0, 1, 2].map((i) => ({ name: `copy${i}`, text })));
  const query = { query: "storm surge at the lighthouse", mode: "hybrid" };
  const all = await search(server, copies, query);
  expect(all.results.map((r) => r.score)).toEqual([1, 1, 1]);
  expect((await search(server, copies, { ...query, score_threshold: 0.99 })).results).toHaveLength(3);
});

test("keyword_query replaces the keyword side's text", async () => {
  const data = await search(server, kb, { query: "something about baking", keyword_query: "header corner kick", mode: "keyword" });
  expect(data.query).toBe("something about baking");
  expect(docNames(kb, data.results)).toEqual(["football"]);
  const hybrid = await search(server, kb, { query: "goal striker", keyword_query: "chloroplasts", mode: "hybrid", alpha: 0.2 });
  expect(docNames(kb, hybrid.results)[0]).toBe("photosynthesis");
});

test("score_threshold drops results below it", async () => {
  for (const mode of ["vector", "keyword", "hybrid"]) {
    const all = await search(server, kb, { query: "volcano lava magma", mode });
    const cut = all.results[0].score;
    const kept = await search(server, kb, { query: "volcano lava magma", mode, score_threshold: cut });
    expect(kept.results.map((r) => r.chunk_id)).toEqual(all.results.filter((r) => r.score >= cut).map((r) => r.chunk_id));
    expect(kept.results.length).toBeGreaterThanOrEqual(1);
    const none = await search(server, kb, { query: "volcano lava magma", mode, score_threshold: 1 });
    expect(none.results.every((r) => r.score >= 1)).toBe(true);
  }
});

test("hostile keyword queries never fail", async () => {
  const hostile = [
    '"unbalanced quote',
    "volcano*",
    "-volcano",
    "NEAR(volcano lava)",
    "text: volcano",
    "((( volcano",
    "volcano AND OR NOT",
    "^volcano + {lava}",
    "火山 噴火",
    "вулкан",
    "🌋🔥",
    "'; DROP TABLE chunks; --",
    "\u0000\u0001",
    "***",
  ];
  for (const query of hostile) {
    for (const mode of ["keyword", "hybrid"]) {
      const res = await searchRaw(server, kb, { query, mode });
      expect(res.status).toBe(200);
    }
  }
  const quoted = await search(server, kb, { query: '"volcano" NEAR lava*', mode: "keyword" });
  expect(docNames(kb, quoted.results)).toEqual(["volcano"]);
});

/** A new knowledge base of these documents, and the names of what a keyword search finds for each query. */
async function keywordFinds(docs: TextDoc[], queries: string[]): Promise<{ kb: SearchKb; found: Record<string, string[]> }> {
  const fresh = await createKb(server, kb.account);
  await addDocs(server, fresh, docs);
  const found: Record<string, string[]> = {};
  for (const query of queries) found[query] = docNames(fresh, (await search(server, fresh, { query, mode: "keyword" })).results);
  return { kb: fresh, found };
}

test("keyword search finds words of scripts written without spaces: one CJK character, a Thai word in a run", async () => {
  const { found } = await keywordFinds(
    [
      { name: "tokyo", text: "東京は日本の首都です。" },
      { name: "cat", text: "猫是一种常见的家养宠物。" },
      { name: "thai", text: "การค้นหาข้อมูลในเอกสาร" },
      { name: "korean", text: "검색 엔진은 문서를 찾습니다" },
    ],
    ["東", "京", "東京", "首都", "です", "て", "猫", "宠物", "ข้อมูล", "เอกสาร", "검색"],
  );
  expect(found).toEqual({
    東: ["tokyo"],
    京: ["tokyo"],
    東京: ["tokyo"],
    首都: ["tokyo"],
    です: ["tokyo"],
    // Kana keep their voicing marks: て is not で.
    て: [],
    猫: ["cat"],
    宠物: ["cat"],
    ข้อมูล: ["thai"],
    เอกสาร: ["thai"],
    검색: ["korean"],
  });
});

test("keyword search: short words people search for, letters without a mark spelled as in ASCII, Indic vowel signs kept, invisible joiners in a query, numbers whole", async () => {
  const { kb: words, found } = await keywordFinds(
    [
      { name: "who", text: "The WHO published new guidelines on air quality." },
      { name: "chess", text: "She won the regional chess championship last spring." },
      { name: "radio", text: "The old AM radio still plays the morning news." },
      { name: "vitamin", text: "Salmon is a good source of vitamin D." },
      { name: "street", text: "The bakery on Hauptstraße opens at seven." },
      { name: "bridge", text: "A bridge crosses the Øresund between two countries." },
      { name: "persian", text: "من می‌خواهم این کتاب را بخوانم" },
      { name: "router", text: "The wireless router sits in the hall." },
      { name: "work", text: "मुझे आज बहुत काम है" },
      { name: "less", text: "आज पानी कम है" },
    ],
    ["WHO", "won", "AM", "D", "hauptstrasse", "oresund", "می‌خواهم", "wire\u200bless", "काम", "कम"],
  );
  // A number with dots, commas or dashes is also one term: the text that has it comes first.
  await addDocs(server, words, [
    { name: "release-123", text: "Release 1.2.3 fixes the login screen." },
    { name: "release-321", text: "Release 3.2.1 adds a dark theme to the login screen." },
    { name: "deadline", text: "The grant deadline is 2024-01-05 at noon." },
    { name: "meeting", text: "The board meets on 2024-05-01 and again on 2024-05-10." },
    { name: "budget", text: "The repair budget is 10,000 euros." },
  ]);
  const first = async (query: string) => docNames(words, (await search(server, words, { query, mode: "keyword" })).results)[0];
  expect({ "3.2.1": await first("3.2.1"), "1.2.3": await first("1.2.3"), "2024-01-05": await first("2024-01-05"), "10000": await first("10000") }).toEqual({
    "3.2.1": "release-321",
    "1.2.3": "release-123",
    "2024-01-05": "deadline",
    "10000": "budget",
  });
  expect(found).toEqual({
    WHO: ["who"],
    won: ["chess"],
    AM: ["radio"],
    D: ["vitamin"],
    hauptstrasse: ["street"],
    oresund: ["bridge"],
    "می‌خواهم": ["persian"],
    "wire\u200bless": ["router"],
    // a vowel sign of Devanagari is a letter, not an accent: work and less are two words
    काम: ["work"],
    कम: ["less"],
  });
});

test("a query with no searchable terms returns no keyword results", async () => {
  for (const query of ["the of and", "!!! ???", "🌋"]) {
    const data = await search(server, kb, { query, mode: "keyword" });
    expect(data.results).toEqual([]);
  }
});

describe("validation", () => {
  const invalid: [unknown, string][] = [
    [{}, "query"],
    [{ query: "" }, "query"],
    [{ query: "   " }, "query"],
    [{ query: "x".repeat(10_001) }, "query"],
    [{ query: "x", top_k: 0 }, "top_k"],
    [{ query: "x", top_k: 51 }, "top_k"],
    [{ query: "x", top_k: 2.5 }, "top_k"],
    [{ query: "x", mode: "semantic" }, "mode"],
    [{ query: "x", alpha: 1.5 }, "alpha"],
    [{ query: "x", alpha: -0.1 }, "alpha"],
    [{ query: "x", score_threshold: 2 }, "score_threshold"],
    [{ query: "x", rerank: "yes" }, "rerank"],
    [{ query: "x", include_metadata: 1 }, "include_metadata"],
    [{ query: "x", keyword_query: "" }, "keyword_query"],
    [{ query: "x", keyword_query: " \t\n" }, "keyword_query"],
    [{ query: "x", filter: "topic" }, "filter"],
  ];
  for (const [body, field] of invalid) {
    test(`${JSON.stringify(body).slice(0, 60)} → 400 at ${field}`, async () => {
      const res = await searchRaw(server, kb, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
      expect(res.body.error.details.issues.map((i: { path: string[] }) => i.path[0])).toContain(field);
    });
  }

  test("an empty or blank query is one issue", async () => {
    for (const query of ["", " \n\t ", "\u00ad\u200b \ufeff"]) {
      const res = await searchRaw(server, kb, { query });
      expect(res.body.error.details.issues).toEqual([{ path: ["query"], message: expect.any(String) }]);
    }
    // nor is one of only invisible characters, which had the empty text embedded
    const invisible = await searchRaw(server, kb, { query: "\u200b\u00ad", mode: "vector" });
    expect([invisible.status, invisible.body.error.details.issues]).toEqual([400, [{ path: ["query"], message: "must not be blank" }]]);
  });

  test("a top_k far out of range is one issue, naming the bound of 50 (or 1)", async () => {
    for (const [top_k, bound] of [[1e16, "50"], [1e308, "50"], [-1e20, "1"]] as const) {
      const res = await searchRaw(server, kb, { query: "x", top_k });
      expect(res.body.error.details.issues).toEqual([{ path: ["top_k"], message: expect.stringContaining(bound) }]);
      expect(res.body.error.details.issues[0].message).not.toContain("9007199254740991");
    }
  });

  test("boundaries are accepted", async () => {
    for (const body of [
      { query: "x".repeat(10_000), top_k: 50 },
      { query: "x", top_k: 1, alpha: 0, score_threshold: 0 },
      { query: "x", alpha: 1, score_threshold: 1, mode: "hybrid" },
    ]) {
      expect((await searchRaw(server, kb, body)).status).toBe(200);
    }
  });

  test("null means absent for the fields without a default: filter, score_threshold, keyword_query", async () => {
    const plain = await search(server, kb, { query: "lava and ash", mode: "hybrid" });
    const nulls = await search(server, kb, { query: "lava and ash", mode: "hybrid", filter: null, score_threshold: null, keyword_query: null });
    expect(nulls.results).toEqual(plain.results);
    expect(plain.results).toHaveLength(TOPICS.length);
    for (const field of ["top_k", "rerank", "include_metadata", "mode", "alpha", "query"]) {
      const res = await searchRaw(server, kb, { query: "x", [field]: null });
      expect(res.status).toBe(400);
      expect(res.body.error.details.issues[0].path).toEqual([field]);
    }
  });

  test("a knowledge base of another account, or none, is 404; bad ids are 400", async () => {
    const other = await createKb(server);
    const res = await server.request("POST", `/v1/knowledge-bases/${other.kbId}/search`, { token: kb.account.apiKey, body: { query: "x" } });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe(`Knowledge base not found: ${other.kbId}`);
    const bad = await server.request("POST", "/v1/knowledge-bases/nope/search", { token: kb.account.apiKey, body: { query: "x" } });
    expect(bad.status).toBe(400);
    const anonymous = await server.request("POST", `/v1/knowledge-bases/${kb.kbId}/search`, { body: { query: "x" } });
    expect(anonymous.status).toBe(401);
  });
});

test("the embedding model failing is 503 EXTERNAL_SERVICE_ERROR; keyword mode does not need it", async () => {
  const embedder = server.server.ctx.models.embedder;
  const embed = embedder.embed;
  embedder.embed = () => Promise.reject(new Error("model crashed"));
  try {
    for (const mode of ["vector", "hybrid"]) {
      const res = await searchRaw(server, kb, { query: "volcano", mode });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("EXTERNAL_SERVICE_ERROR");
    }
    expect((await searchRaw(server, kb, { query: "volcano", mode: "keyword" })).status).toBe(200);
  } finally {
    embedder.embed = embed;
  }
});
