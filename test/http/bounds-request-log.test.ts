// Request history bounds through the real API: a request with 4,000 metadata or filter keys is logged with a
// summary of at most 20 keys, each cut to 64 characters, the total given and `truncated` set, 2 KB at most;
// a request without an account (401, or an unauthenticated route) is logged with no request summary at all.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signup, startTestServer, type ApiResponse, type TestAccount, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let account: TestAccount;
let kbId: string;

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
  account = await signup(server);
  kbId = (await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "log" } })).body.data.id;
});
afterAll(() => server.stop());

/** 4,000 keys of 100 characters each (about 0.5 MB, within a JSON body's 1 MB and 10,000 keys). */
const manyKeys = (value: unknown) => Object.fromEntries(Array.from({ length: 4_000 }, (_, i) => [`${String(i).padStart(5, "0")}${"k".repeat(95)}`, value]));
const cutKey = (i: number) => `${String(i).padStart(5, "0")}${"k".repeat(58)}…`;

async function loggedSummary(res: ApiResponse): Promise<Record<string, unknown>> {
  const entry = await server.request("GET", `/v1/requests/${res.headers.get("x-request-id")}`, { token: account.apiKey });
  expect(entry.status).toBe(200);
  return entry.body.data.request_summary;
}

/** The stored row of a request no account can list. */
async function storedRow(res: ApiResponse): Promise<{ account_id: string | null; request_summary: string; status_code: number }> {
  await server.server.ctx.requestLog.flushPending();
  const row = server.server.ctx.db
    .query<{ account_id: string | null; request_summary: string; status_code: number }, [string]>(
      "SELECT account_id, request_summary, status_code FROM request_log WHERE id = ?",
    )
    .get(res.headers.get("x-request-id")!);
  expect(row).not.toBeNull();
  return row!;
}

describe("summaries of authenticated requests are bounded", () => {
  test("4,000 metadata keys: the first 20, cut to 64 characters (the last \"…\"), with the total and truncated", async () => {
    const res = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "n".repeat(5000), metadata: manyKeys(1) } });
    expect(res.status).toBe(400);
    const summary = await loggedSummary(res);
    expect(summary).toEqual({
      name: `${"n".repeat(199)}…`,
      metadata_keys: Array.from({ length: 20 }, (_, i) => cutKey(i)),
      metadata_keys_total: 4_000,
      truncated: true,
    });
    expect(Buffer.byteLength(JSON.stringify(summary))).toBeLessThanOrEqual(2048);
  });

  test("4,000 filter keys in a search", async () => {
    const res = await server.request("POST", `/v1/knowledge-bases/${kbId}/search`, {
      token: account.apiKey,
      body: { query: "q".repeat(10_000), top_k: 5, filter: manyKeys({ $eq: "x" }) },
    });
    expect(res.status).toBe(400);
    expect(await loggedSummary(res)).toEqual({
      query: `${"q".repeat(199)}…`,
      top_k: 5,
      filter_keys: Array.from({ length: 20 }, (_, i) => cutKey(i)),
      filter_keys_total: 4_000,
      truncated: true,
    });
  });

  test("a search that passes validation: its 10,000-character query is stored cut to 200 characters and …", async () => {
    const res = await server.request("POST", `/v1/knowledge-bases/${kbId}/search`, {
      token: account.apiKey,
      body: { query: "q".repeat(10_000), top_k: 5, mode: "keyword" },
    });
    expect(res.status).toBe(200);
    expect(await loggedSummary(res)).toEqual({ query: `${"q".repeat(199)}…`, top_k: 5, mode: "keyword", rerank: true, filter_keys: [] });
  });

  test("strings are cut to 200 characters, \"…\" included, counted in code points: an emoji is kept whole, never half a surrogate pair", async () => {
    const query = `a${"😀".repeat(300)}`;
    const res = await server.request("POST", `/v1/knowledge-bases/${kbId}/search`, { token: account.apiKey, body: { query, top_k: 5, mode: "keyword" } });
    expect(res.status).toBe(200);
    expect((await loggedSummary(res)).query).toBe(`a${"😀".repeat(198)}…`);
  });

  test("a summary a route fills itself is bounded too: 64 legal metadata keys of 256 characters", async () => {
    const metadata = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`${String(i).padStart(5, "0")}${"m".repeat(251)}`, i]));
    const res = await server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, { token: account.apiKey, body: { text: "Hello.", metadata } });
    expect(res.status).toBe(202);
    const summary = await loggedSummary(res);
    expect(summary.metadata_keys).toEqual(Array.from({ length: 20 }, (_, i) => `${String(i).padStart(5, "0")}${"m".repeat(58)}…`));
    expect(summary).toMatchObject({ name: null, text_length: 6, metadata_keys_total: 64, truncated: true });
  });

  test("a small summary is stored as it is, without truncated", async () => {
    const res = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "Support", metadata: { team: "cx" } } });
    expect(await loggedSummary(res)).toEqual({ name: "Support", metadata_keys: ["team"] });
  });
});

describe("requests without an account are logged without a request summary", () => {
  const hugeBody = { name: "x", query: "secret-ish text", metadata: manyKeys(1), filter: manyKeys({ $eq: 1 }) };

  test("a /v1 request without a credential (401)", async () => {
    const res = await server.request("POST", "/v1/knowledge-bases", { body: hugeBody });
    expect(res.status).toBe(401);
    expect(await storedRow(res)).toEqual({ account_id: null, request_summary: "{}", status_code: 401 });
  });

  test("a /v1 request with an invalid credential (401)", async () => {
    const res = await server.request("POST", `/v1/knowledge-bases/${kbId}/search`, { token: "qk_not-a-real-key", body: hugeBody });
    expect(res.status).toBe(401);
    expect(await storedRow(res)).toEqual({ account_id: null, request_summary: "{}", status_code: 401 });
  });

  test("a route without authentication (signup, login) refusing a huge body (400)", async () => {
    for (const path of ["/auth/signup", "/auth/login"]) {
      const res = await server.request("POST", path, { body: { email: "not an email", password: 5, ...hugeBody } });
      expect(res.status).toBe(400);
      expect(await storedRow(res)).toEqual({ account_id: null, request_summary: "{}", status_code: 400 });
    }
  });
});
