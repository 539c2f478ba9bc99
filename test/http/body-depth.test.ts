// JSON bodies nested beyond MAX_JSON_DEPTH, or holding more keys or values than any valid request, are
// refused by the body parser in one pass, before parsing (a body 100,000 levels deep used to block the
// server for 30 s and end in a 500 from a stack overflow; one of 3.5 million keys took 2.3 s to parse).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH, MAX_JSON_KEYS, MAX_JSON_VALUES } from "../../src/http/body.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { workspace, type Workspace } from "../ingest/ingest-helpers.ts";

let server: TestServer;
let ws: Workspace;

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
  ws = await workspace(server);
});

afterAll(() => server.stop());

const nestedArray = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

test("a body 100,000 levels deep is a 400 naming the limit, and the server answers the next request", async () => {
  for (const body of [`{"name":${nestedArray(100_000)}}`, nestedArray(100_000), `{"metadata":{"key":${nestedArray(100_000)}}}`]) {
    const res = await server.request("PATCH", `/v1/knowledge-bases/${ws.kbId}`, { token: ws.account.apiKey, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
    expect(res.body.error.details.issues).toEqual([{ path: [], message: `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep` }]);
  }
  const login = await server.request("POST", "/auth/login", { body: nestedArray(50_000) });
  expect(login.status).toBe(400);
  expect((await server.request("GET", `/v1/knowledge-bases/${ws.kbId}`, { token: ws.account.apiKey })).status).toBe(200);
});

test("brackets inside strings do not count, and nesting up to the limit reaches validation", async () => {
  const brackets = await server.request("PATCH", `/v1/knowledge-bases/${ws.kbId}`, { token: ws.account.apiKey, body: { name: "[[[{{{".repeat(40) } });
  expect(brackets.status).toBe(200);
  const atLimit = await server.request("PATCH", `/v1/knowledge-bases/${ws.kbId}`, { token: ws.account.apiKey, body: `{"name":${nestedArray(MAX_JSON_DEPTH - 1)}}` });
  expect(atLimit.status).toBe(400);
  expect(atLimit.body.error.details.issues[0].path).toEqual(["name"]);
});

test("more object keys or values than any valid request holds are refused before parsing; up to the limits they reach validation", async () => {
  const search = `/v1/knowledge-bases/${ws.kbId}/search`;
  const keys = (count: number) => `{"query":"x",${Array.from({ length: count - 1 }, (_, i) => `"k${i}":0`).join(",")}}`;
  const tooManyKeys = await server.request("POST", search, { token: ws.account.apiKey, body: keys(MAX_JSON_KEYS + 1) });
  expect([tooManyKeys.status, tooManyKeys.body.error.details.issues]).toEqual([400, [{ path: [], message: `holds more than ${MAX_JSON_KEYS} object keys` }]]);
  expect((await server.request("POST", search, { token: ws.account.apiKey, body: keys(MAX_JSON_KEYS) })).status).toBe(200); // unknown fields are ignored
  const values = (count: number) => `{"query":"x","filter":{"tag":{"$in":[${Array(count).fill("1").join(",")}]}}}`;
  const tooManyValues = await server.request("POST", search, { token: ws.account.apiKey, body: values(MAX_JSON_VALUES) });
  expect([tooManyValues.status, tooManyValues.body.error.details.issues]).toEqual([400, [{ path: [], message: `holds more than ${MAX_JSON_VALUES} values` }]]);
  // the filter's own rules answer a list that the parser lets through (here its 16 KB)
  const longList = await server.request("POST", search, { token: ws.account.apiKey, body: values(MAX_JSON_VALUES - 10) });
  expect(longList.body.error.details.issues[0].path).toEqual(["filter"]);
});

test("a JSON body other than raw text's is capped at 1 MB, read or declared", async () => {
  const res = await server.request("PATCH", `/v1/knowledge-bases/${ws.kbId}`, { token: ws.account.apiKey, body: { description: "d".repeat(MAX_JSON_BODY_BYTES) } });
  expect([res.status, res.body.error.details.issues]).toEqual([400, [{ path: ["body"], message: `is too large: ${MAX_JSON_BODY_BYTES + 18} bytes; the maximum is ${MAX_JSON_BODY_BYTES} bytes` }]]);
});
