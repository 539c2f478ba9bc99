// Search filter size limits through the real API: every limit refused with the path of what broke it, a
// filter at every limit at once accepted and applied, and a huge or deeply nested filter refused cheaply.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, docNames, search, searchRaw, type SearchKb } from "../search/search-helpers.ts";

let server: TestServer;
let kb: SearchKb;

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
  kb = await createKb(server);
  await addDocs(server, kb, [
    { name: "lava", text: "Lava flows from the volcano down to the sea.", metadata: { region: "r7", shelf: "a".repeat(1024) } },
    { name: "ash", text: "Ash from the volcano covers the village roofs.", metadata: { region: "r999", shelf: "b" } },
  ]);
});
afterAll(() => server.stop());

/** The issues of a refused search: [path, message] pairs. */
async function refused(filter: unknown): Promise<[unknown[], string][]> {
  const res = await searchRaw(server, kb, { query: "volcano", mode: "keyword", filter });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("VALIDATION_ERROR");
  return res.body.error.details.issues.map((i: { path: unknown[]; message: string }) => [i.path, i.message]);
}

const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, { $ne: "x" }]));

describe("over a limit: 400 with the path of the offending part", () => {
  test("more than 32 keys: one issue on the filter itself", async () => {
    expect(await refused(keys(33))).toEqual([[["filter"], "must have at most 32 keys (this one has 33)"]]);
  });

  test("more than 1000 values in $in or $nin", async () => {
    const values = Array.from({ length: 1001 }, (_, i) => i);
    expect(await refused({ region: { $nin: values } })).toEqual([
      [["filter", "region", "$nin"], "must have at most 1000 values (this one has 1001)"],
    ]);
  });

  test("a string value over 1024 characters, alone or in a list", async () => {
    const long = "x".repeat(1025);
    expect(await refused({ region: { $eq: "😀".repeat(1025) } })).toEqual([
      [["filter", "region", "$eq"], "must be at most 1024 characters (this one has 1025)"],
    ]);
    expect(await refused({ region: { $eq: long } })).toEqual([
      [["filter", "region", "$eq"], "must be at most 1024 characters (this one has 1025)"],
    ]);
    expect(await refused({ region: { $in: ["r7", long] } })).toEqual([
      [["filter", "region", "$in", 1], "must be at most 1024 characters (this one has 1025)"],
    ]);
  });

  test("a key over 256 characters", async () => {
    const key = "k".repeat(257);
    expect(await refused({ [key]: { $eq: 1 } })).toEqual([[["filter", key], "metadata keys are at most 256 characters (this one has 257)"]]);
    const emoji = "😀".repeat(257);
    expect(await refused({ [emoji]: { $eq: 1 } })).toEqual([[["filter", emoji], "metadata keys are at most 256 characters (this one has 257)"]]);
    // Characters are code points: 256 emoji (512 UTF-16 units) make a key at the limit, 1024 a value at it.
    const atLimit = await searchRaw(server, kb, { query: "volcano", mode: "keyword", filter: { ["😀".repeat(256)]: { $ne: "😀".repeat(1024) } } });
    expect(atLimit.status).toBe(200);
  });

  test("more than 16 KB as JSON, e.g. the audit's 140 KB filter: one issue, not one per part", async () => {
    const values = Array.from({ length: 1000 }, (_, i) => `value-${i}-${"v".repeat(140)}`);
    const huge = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, { $in: values.slice(i * 30, i * 30 + 30) }]));
    expect(JSON.stringify(huge).length).toBeGreaterThan(140_000);
    expect(await refused(huge)).toEqual([[["filter"], "must be at most 16384 bytes as JSON (this one is larger)"]]);
  });

  test("thousands of keys or 250 levels of nesting: one issue, no server error", async () => {
    expect(await refused(keys(4_000))).toEqual([[["filter"], "must have at most 32 keys (this one has 4000)"]]);
    const deep = JSON.parse(`${"[".repeat(250)}1${"]".repeat(250)}`);
    expect(await refused({ region: { $in: deep } })).toEqual([[["filter", "region", "$in", 0], "must be a string, number or boolean"]]);
    const deepObject = JSON.parse(`${'{"a":'.repeat(250)}1${"}".repeat(250)}`);
    const issues = await refused(deepObject);
    expect(issues.length).toBe(1);
    expect(issues[0][0][0]).toBe("filter");
  });
});

test("a filter at every limit at once is accepted and applied", async () => {
  // 32 keys; one $in of 1000 values; 1024-character strings; a 256-character key; exactly 16 KB.
  const values: (string | number)[] = Array.from({ length: 999 }, (_, i) => `r${i}`);
  values.push(1);
  const filter: Record<string, unknown> = {
    region: { $in: values },
    shelf: { $in: ["a".repeat(1024), "c"] },
    ["k".repeat(256)]: { $ne: "z" },
  };
  for (let i = 0; Object.keys(filter).length < 32; i++) filter[`absent${i}`] = { $nin: ["x"] };
  // Grow the absent keys' strings (up to 1024 characters each) until the filter is exactly 16 KB.
  for (let i = 0, room = 16 * 1024 - Buffer.byteLength(JSON.stringify(filter)); room > 0; i++) {
    const grown = Math.min(1024, 1 + room);
    filter[`absent${i}`] = { $nin: ["x".repeat(grown)] };
    room -= grown - 1;
  }
  const size = Buffer.byteLength(JSON.stringify(filter));
  expect(Object.keys(filter)).toHaveLength(32);
  expect(size).toBe(16 * 1024);
  for (const mode of ["keyword", "vector", "hybrid"]) {
    const data = await search(server, kb, { query: "volcano", mode, filter });
    expect(docNames(kb, data.results)).toEqual(["lava"]);
  }
});
