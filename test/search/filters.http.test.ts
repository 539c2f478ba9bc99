// Metadata filters (spec 4.4.1) through the real API: every operator, missing keys, dates, validation
// paths, and a selective filter that must still fill top_k.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, docNames, search, searchRaw, TOPICS, type SearchKb } from "./search-helpers.ts";

let server: TestServer;
let kb: SearchKb;

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
  kb = await createKb(server);
  await addDocs(server, kb, TOPICS);
});
afterAll(() => server.stop());

/** Names of the documents a filter lets through, in every mode, sorted. */
async function matching(filter: Record<string, unknown>): Promise<string[]> {
  const perMode = await Promise.all(
    ["vector", "keyword", "hybrid"].map(async (mode) => {
      const data = await search(server, kb, { query: "the water crust oven plants tax goal sunlight magma", mode, top_k: 50, filter });
      if (mode !== "keyword") expect(data.usage.chunks_searched).toBe(data.results.length);
      return docNames(kb, data.results).sort();
    }),
  );
  expect(perMode[0]).toEqual(perMode[2]);
  return perMode[0];
}

describe("operators", () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ["$eq string", { topic: { $eq: "cooking" } }, ["baking"]],
    ["$eq number (type-strict: the string \"2023\" is not 2023)", { year: { $eq: 2023 } }, []],
    ["$eq on a string value", { year: { $eq: "2023" } }, ["tax"]],
    ["$eq boolean", { featured: { $eq: true } }, ["photosynthesis", "volcano"]],
    ["$eq matches an element of an array value", { tags: { $eq: "team" } }, ["football"]],
    ["$ne also matches documents without the key", { featured: { $ne: true } }, ["baking", "football", "tax"]],
    ["$gt number", { year: { $gt: 2020 } }, ["baking", "football"]],
    ["$gte number", { year: { $gte: 2020 } }, ["baking", "football", "photosynthesis"]],
    ["$lt number", { year: { $lt: 2020 } }, ["volcano"]],
    ["$lte number", { year: { $lte: 2020 } }, ["photosynthesis", "volcano"]],
    ["$in", { topic: { $in: ["sports", "biology", "nothing"] } }, ["football", "photosynthesis"]],
    ["$in with an array value", { tags: { $in: ["hazard", "food"] } }, ["baking", "volcano"]],
    ["$nin also matches documents without the key", { tags: { $nin: ["food", "ball"] } }, ["photosynthesis", "tax", "volcano"]],
    ["$in of nothing matches nothing", { topic: { $in: [] } }, []],
    ["range operators skip missing keys", { featured: { $gte: 0 } }, []],
    ["keys are ANDed", { year: { $gte: 2019 }, featured: { $eq: true } }, ["photosynthesis", "volcano"]],
    ["operators on one key are ANDed", { year: { $gt: 2019, $lt: 2022 } }, ["baking", "photosynthesis"]],
    ["an unknown key matches only negations", { colour: { $ne: "red" } }, ["baking", "football", "photosynthesis", "tax", "volcano"]],
  ];
  for (const [name, filter, expected] of cases) {
    test(name, async () => {
      expect(await matching(filter)).toEqual(expected);
    });
  }
});

test("an array value's elements match $eq/$in/$ne/$nin; an array nested in it matches nothing", async () => {
  const nested = await createKb(server);
  await addDocs(server, nested, [
    { name: "nested", text: "The kestrel hovered over the meadow.", metadata: { n: [[1], 2], s: ["a", ["b"]] } },
    { name: "flat", text: "The kestrel dived on a vole.", metadata: { n: 1, s: "b" } },
  ]);
  const names = async (filter: Record<string, unknown>) =>
    docNames(nested, (await search(server, nested, { query: "kestrel", mode: "keyword", filter })).results).sort();
  expect(await names({ n: { $eq: 1 } })).toEqual(["flat"]);
  expect(await names({ n: { $in: [1] } })).toEqual(["flat"]);
  expect(await names({ n: { $ne: 1 } })).toEqual(["nested"]);
  expect(await names({ n: { $nin: [1] } })).toEqual(["nested"]);
  expect(await names({ n: { $eq: 2 } })).toEqual(["nested"]);
  expect(await names({ s: { $in: ["b"] } })).toEqual(["flat"]);
  expect(await names({ s: { $eq: "a" } })).toEqual(["nested"]);
});

describe("ISO dates compare as dates", () => {
  const cases: [Record<string, unknown>, string[]][] = [
    [{ published: { $gte: "2021-01-01" } }, ["baking", "football"]],
    [{ published: { $lt: "2020-05-05T00:00:01Z" } }, ["photosynthesis", "volcano"]],
    [{ published: { $gt: "2021-07-15T11:00:00+02:00" } }, ["baking", "football"]],
    [{ published: { $lt: "2021-07-15T09:59:59Z" } }, ["photosynthesis", "volcano"]],
    [{ published: { $eq: "2019-03-01T00:00:00Z" } }, ["volcano"]],
    [{ published: { $eq: "2019-03-01T00:00:00.000" } }, ["volcano"]],
    [{ published: { $in: ["2022-11-20T00:00:00Z", "2000-01-01"] } }, ["football"]],
    [{ published: { $gte: "1900-01-01", $lte: "2100-01-01" } }, ["baking", "football", "photosynthesis", "volcano"]],
    [{ published: { $lt: "2024-02-29" } }, ["baking", "football", "photosynthesis", "volcano"]],
  ];
  for (const [filter, expected] of cases) {
    test(JSON.stringify(filter), async () => {
      expect(await matching(filter)).toEqual(expected);
    });
  }
});

test("invalid filters are 400 VALIDATION_ERROR with the path of each offending part", async () => {
  const cases: [unknown, (string | number)[][]][] = [
    [{ year: { $gt: true } }, [["filter", "year", "$gt"]]],
    [{ year: { $regex: "x" } }, [["filter", "year", "$regex"]]],
    [{ year: 2020 }, [["filter", "year"]]],
    [{ year: {} }, [["filter", "year"]]],
    [{ year: [1, 2] }, [["filter", "year"]]],
    [{ topic: { $in: "cooking" } }, [["filter", "topic", "$in"]]],
    [{ topic: { $nin: [1, { a: 1 }] } }, [["filter", "topic", "$nin", 1]]],
    [{ topic: { $eq: null } }, [["filter", "topic", "$eq"]]],
    [{ topic: { $eq: { nested: 1 } } }, [["filter", "topic", "$eq"]]],
    [{ published: { $lt: "last tuesday" } }, [["filter", "published", "$lt"]]],
    [{ published: { $lt: "2021-13-45" } }, [["filter", "published", "$lt"]]],
    // days past the month's end are not dates (Date.parse alone would take 2023-02-30 for March 2)
    [{ published: { $gte: "2023-02-30" } }, [["filter", "published", "$gte"]]],
    [{ published: { $lte: "2023-02-29T12:00:00Z" } }, [["filter", "published", "$lte"]]],
    [{ published: { $gt: "2023-04-31" } }, [["filter", "published", "$gt"]]],
    [
      { a: { $gt: "x", $or: 1 }, b: "c" },
      [["filter", "a", "$gt"], ["filter", "a", "$or"], ["filter", "b"]],
    ],
    [{ $or: [{ a: { $eq: 1 } }] }, [["filter", "$or"]]],
    [[{ topic: { $eq: "cooking" } }], [["filter"]]],
    [JSON.parse('{"__proto__": {"$bad": 1}}'), [["filter", "__proto__", "$bad"]]],
  ];
  for (const [filter, paths] of cases) {
    const res = await searchRaw(server, kb, { query: "volcano", filter });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
    expect(res.body.error.details.issues.map((i: { path: unknown[] }) => i.path)).toEqual(paths);
  }
});

test("$and, $or, $not and $nor used as other stores have them are told there are no logical operators; as metadata keys they work", async () => {
  for (const filter of [{ $or: [{ topic: { $eq: "cooking" } }, { year: { $gte: 2020 } }] }, { $and: { topic: { $eq: "cooking" } } }, { $not: { topic: "x" } }, { $nor: [] }]) {
    const res = await searchRaw(server, kb, { query: "volcano", filter });
    const key = Object.keys(filter)[0];
    expect(res.body.error.details.issues).toEqual([
      {
        path: ["filter", key],
        message: `logical operators are not supported: a filter's keys all apply (AND), and there is no ${key}; e.g. {"lang": {"$eq": "en"}, "year": {"$gte": 2024}}`,
      },
    ]);
  }
  expect(await matching({ $or: { $ne: "x" }, topic: { $eq: "cooking" } })).toEqual(["baking"]);
  // A metadata key "$and" with a misspelt operator beside a real one is told of the operator.
  const typo = await searchRaw(server, kb, { query: "volcano", filter: { $and: { $eq: "x", $bogus: 1 } } });
  expect(typo.body.error.details.issues.map((i: { path: unknown[] }) => i.path)).toEqual([["filter", "$and", "$bogus"]]);
});

test("a \"__proto__\" key is a metadata key like any other, not dropped", async () => {
  expect(await matching(JSON.parse('{"__proto__": {"$eq": "x"}}'))).toEqual([]);
  expect(await matching(JSON.parse('{"__proto__": {"$ne": "x"}, "topic": {"$eq": "cooking"}}'))).toEqual(["baking"]);
});

test("a filter matching 1 % of the chunks still returns top_k, in every mode", async () => {
  const big = await createKb(server);
  const sentence = (i: number) =>
    `Report ${i}: volcanic eruptions, magma chambers and lava flows were measured at station ${i}, with ash columns rising over the crater. `;
  // ~50k words of filler, so the two short rare documents stay near 1 % of the chunks whatever the chunk size.
  const filler = Array.from({ length: 10 }, (_, d) => ({
    name: `filler-${d}`,
    text: Array.from({ length: 200 }, (_, i) => sentence(d * 1000 + i)).join("\n\n"),
    metadata: { shelf: "common" },
  }));
  const rare = [
    { name: "rare-garden", text: "Gardening notes: tomatoes need sun, water the basil daily.", metadata: { shelf: "rare" } },
    { name: "rare-kitchen", text: "Kitchen notes: sharpen the knives and oil the basil board.", metadata: { shelf: "rare" } },
  ];
  await addDocs(server, big, [...filler, ...rare]);
  const all = await search(server, big, { query: "volcano", mode: "keyword", top_k: 1 });
  const rareFilter = { shelf: { $eq: "rare" } };
  const scoped = await search(server, big, { query: "volcano", mode: "keyword", filter: rareFilter });
  const rareChunks = scoped.usage.chunks_searched;
  expect(rareChunks).toBeGreaterThanOrEqual(2);
  expect(rareChunks / all.usage.chunks_searched).toBeLessThanOrEqual(0.015);
  for (const mode of ["vector", "hybrid"]) {
    const data = await search(server, big, { query: "volcanic eruption lava magma ash crater", mode, top_k: rareChunks, filter: rareFilter });
    expect(data.usage.chunks_searched).toBe(rareChunks);
    expect(data.results).toHaveLength(rareChunks);
    expect(new Set(data.results.map((r) => r.document_id))).toEqual(new Set([big.docs["rare-garden"], big.docs["rare-kitchen"]]));
  }
  // Keyword mode returns only chunks containing a query term: both rare documents mention basil.
  const keyword = await search(server, big, { query: "volcanic basil", mode: "keyword", top_k: 2, filter: rareFilter });
  expect(docNames(big, keyword.results).sort()).toEqual(["rare-garden", "rare-kitchen"]);
}, 30_000);

test("metadata changes (PATCH) apply to the next search, even with a filter just used (its mask is not reused)", async () => {
  expect(await matching({ topic: { $eq: "money" } })).toEqual([]);
  const res = await server.request("PATCH", `/v1/knowledge-bases/${kb.kbId}/documents/${kb.docs.tax}`, {
    token: kb.account.apiKey,
    body: { metadata: { ...TOPICS[4].metadata, topic: "money" } },
  });
  expect(res.status).toBe(200);
  expect(await matching({ topic: { $eq: "money" } })).toEqual(["tax"]);
  const data = await search(server, kb, { query: "income tax", filter: { topic: { $eq: "money" } } });
  expect(data.results[0].document_metadata.topic).toBe("money");
});

test("a result never contradicts its filter, although its document's metadata changes while the search waits for its embedding", async () => {
  const raced = await createKb(server);
  await addDocs(server, raced, [
    { name: "river", text: "The zqe river runs through the common valley past the mill.", metadata: { grp: "b" } },
    { name: "stream", text: "A zqe stream joins the common river below the bridge.", metadata: { grp: "b" } },
  ]);
  const patch = (name: string, grp: string) =>
    server.request("PATCH", `/v1/knowledge-bases/${raced.kbId}/documents/${raced.docs[name]}`, { token: raced.account.apiKey, body: { metadata: { grp } } });
  // A query long enough that its embedding takes a while: the PATCH lands meanwhile, after the search has
  // worked out which documents its filter admits.
  const query = `zqe common river ${"valley mill bridge water ".repeat(350)}`;
  let contradicted = 0;
  let returned = 0;
  for (let round = 0; round < 12; round++) {
    const grp = round % 2 === 0 ? "a" : "b";
    const [vector, hybrid] = await Promise.all([
      search(server, raced, { query, mode: "vector", top_k: 10, filter: { grp: { $eq: "b" } } }),
      search(server, raced, { query, mode: "hybrid", top_k: 10, filter: { grp: { $ne: "a" } } }),
      patch("river", grp),
    ]);
    for (const result of [...vector.results, ...hybrid.results]) {
      returned++;
      if (result.document_metadata.grp !== "b") contradicted++;
    }
  }
  expect(returned).toBeGreaterThan(0);
  expect(contradicted).toBe(0);
});
