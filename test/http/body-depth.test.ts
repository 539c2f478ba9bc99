// JSON bodies nested beyond MAX_JSON_DEPTH are refused by the body parser in one pass, before validation
// (a body 100,000 levels deep used to block the server for 30 s and end in a 500 from a stack overflow).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MAX_JSON_DEPTH } from "../../src/http/body.ts";
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
