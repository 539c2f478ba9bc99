// The request history through the real HTTP API: every request recorded with the real status, filters,
// pagination, account isolation, secrets kept out, 30-day retention.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock, signup, startTestServer, waitForDocument, type TestAccount, type TestServer } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";
import { insertRequestLog, type RequestLogRecord } from "../../src/store/requests.ts";
import { MAX_PATH_CHARS, UNATTRIBUTED_PER_SECOND } from "../../src/store/request-log-writer.ts";

let server: TestServer;
const clock = new ManualClock(new Date("2026-03-10T12:00:00.000Z"));
beforeAll(async () => {
  // limits off: these tests make more requests per second than a trial account may
  server = await startTestServer({ clock, env: { QUARRY_LIMITS: "off" } });
});
afterAll(() => server.stop());

const list = (account: TestAccount, query = "", token = account.apiKey) => server.request("GET", `/v1/requests${query}`, { token });
const createKb = (account: TestAccount, body: unknown) => server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body });

describe("recording", () => {
  test("each response's X-Request-Id is its entry, with every field", async () => {
    const account = await signup(server);
    const created = await createKb(account, { name: "Support", description: "faq", metadata: { team: "cx", tier: 1 } });
    const id = created.headers.get("x-request-id")!;
    const res = await server.request("GET", `/v1/requests/${id}`, { token: account.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id,
      method: "POST",
      path: "/api/v1/knowledge-bases",
      status_code: 201,
      duration_ms: expect.any(Number),
      auth_type: "api_key",
      kb_id: null,
      request_summary: { name: "Support", metadata_keys: ["team", "tier"] },
      response_summary: { id: created.body.data.id },
      created_at: expect.any(String),
    });
    expect(Number.isInteger(res.body.data.duration_ms)).toBe(true);
    expect(new Date(res.body.data.created_at).toISOString()).toBe(res.body.data.created_at);
  });

  test("the status code sent is the one recorded: 404 route, 404 resource, 400 malformed JSON, 400 validation", async () => {
    const account = await signup(server);
    const calls = [
      await server.request("GET", "/v1/no-such-route", { token: account.apiKey }),
      await server.request("GET", "/v1/knowledge-bases/kb_0123456789", { token: account.apiKey }),
      await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: '{"name": ' }),
      await createKb(account, { name: "" }),
    ];
    for (const call of calls) {
      const entry = await server.request("GET", `/v1/requests/${call.headers.get("x-request-id")}`, { token: account.apiKey });
      expect(entry.status).toBe(200);
      expect(entry.body.data.status_code).toBe(call.status);
      expect(entry.body.data.response_summary).toEqual({ error_code: call.body.error.code });
    }
    const kbEntry = await server.request("GET", `/v1/requests/${calls[1].headers.get("x-request-id")}`, { token: account.apiKey });
    expect(kbEntry.body.data.kb_id).toBe("kb_0123456789");
    const oddId = await server.request("GET", "/v1/knowledge-bases/kb_DOES-NOT-EXIST/documents", { token: account.apiKey });
    expect(oddId.status).toBe(404);
    const oddEntry = await server.request("GET", `/v1/requests/${oddId.headers.get("x-request-id")}`, { token: account.apiKey });
    expect(oddEntry.body.data).toMatchObject({ status_code: 404, kb_id: "kb_DOES-NOT-EXIST" });
  });

  test("a rate-limited request is recorded as 429", async () => {
    let rateClockMs = 0;
    const limited = await startTestServer({ rateLimitClock: () => rateClockMs });
    try {
      const account = await signup(limited);
      const responses = await Promise.all(Array.from({ length: 6 }, () => limited.request("GET", "/v1/knowledge-bases", { token: account.apiKey })));
      const refused = responses.find((r) => r.status === 429)!;
      rateClockMs += 1000;
      const rows = await limited.request("GET", "/v1/requests?status_code=429", { token: account.apiKey });
      expect(rows.body.data).toHaveLength(1);
      expect(rows.body.data[0]).toMatchObject({
        id: refused.headers.get("x-request-id"),
        status_code: 429,
        response_summary: { error_code: "RATE_LIMIT_EXCEEDED" },
      });
    } finally {
      await limited.stop();
    }
  });
});

describe("GET /v1/requests", () => {
  test("most recent first; API key requests by default, auth_type=jwt lists the dashboard's", async () => {
    const account = await signup(server);
    await createKb(account, { name: "one" });
    clock.advance(1000);
    await server.request("GET", "/v1/account", { token: account.token });
    clock.advance(1000);
    await server.request("GET", "/v1/knowledge-bases", { token: account.apiKey });
    clock.advance(1000);
    const apiKey = await list(account);
    expect(apiKey.status).toBe(200);
    expect(apiKey.body.data.map((e: any) => `${e.method} ${e.path}`)).toEqual(["GET /api/v1/knowledge-bases", "POST /api/v1/knowledge-bases"]);
    expect(apiKey.body.meta).toEqual({ cursor: null, has_more: false });
    const jwt = await list(account, "?auth_type=jwt");
    expect(jwt.body.data.map((e: any) => `${e.method} ${e.path} ${e.auth_type}`)).toEqual(["GET /api/v1/account jwt"]);
  });

  test("only the caller's own account; another account's id is 404 Request not found", async () => {
    const owner = await signup(server);
    const other = await signup(server);
    const call = await createKb(owner, { name: "private" });
    const id = call.headers.get("x-request-id")!;
    expect((await list(other)).body.data).toEqual([]);
    const res = await server.request("GET", `/v1/requests/${id}`, { token: other.apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: "NOT_FOUND", message: `Request not found: ${id}` } });
    const unknown = await server.request("GET", "/v1/requests/req_doesnotexist", { token: owner.apiKey });
    expect(unknown.body.error.message).toBe("Request not found: req_doesnotexist");
    for (const notAnId of ["kb_123", "nonexistent", "REQ_X"]) {
      const res = await server.request("GET", `/v1/requests/${notAnId}`, { token: owner.apiKey });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: "NOT_FOUND", message: `Request not found: ${notAnId}` } });
    }
  });

  test("filters: method, status class, status code, path substring, kb_id, from/to", async () => {
    const account = await signup(server);
    const start = clock.now().toISOString();
    const kb = (await createKb(account, { name: "a" })).body.data;
    clock.advance(60_000);
    const middle = clock.now().toISOString();
    // one millisecond apart, so "most recent first" has one answer
    for (const call of [
      () => server.request("GET", `/v1/knowledge-bases/${kb.id}`, { token: account.apiKey }),
      () => server.request("PATCH", `/v1/knowledge-bases/${kb.id}`, { token: account.apiKey, body: { name: "b" } }),
      () => server.request("GET", "/v1/knowledge-bases/kb_missing0", { token: account.apiKey }),
      () => createKb(account, { name: "" }),
    ]) {
      await call();
      clock.advance(1);
    }
    clock.advance(60_000);
    const end = clock.now().toISOString();
    await server.request("GET", "/v1/usage", { token: account.apiKey });
    clock.advance(1000);

    const paths = async (query: string) => {
      const res = await list(account, query);
      expect(res.status).toBe(200);
      return res.body.data.map((e: any) => `${e.method} ${e.path} ${e.status_code}`);
    };
    expect(await paths("?method=patch")).toEqual([`PATCH /api/v1/knowledge-bases/${kb.id} 200`]);
    expect(await paths("?status=4xx")).toEqual(["POST /api/v1/knowledge-bases 400", "GET /api/v1/knowledge-bases/kb_missing0 404"]);
    expect(await paths("?status_code=201")).toEqual(["POST /api/v1/knowledge-bases 201"]);
    expect(await paths("?status=2xx&method=GET&path=knowledge-bases")).toEqual([`GET /api/v1/knowledge-bases/${kb.id} 200`]);
    expect(await paths(`?kb_id=${kb.id}`)).toEqual([`PATCH /api/v1/knowledge-bases/${kb.id} 200`, `GET /api/v1/knowledge-bases/${kb.id} 200`]);
    expect(await paths("?path=/usage")).toEqual(["GET /api/v1/usage 200"]);
    expect(await paths(`?from=${middle}&to=${end}`)).toHaveLength(4);
    expect(await paths(`?from=${start}&to=${middle}`)).toEqual(["POST /api/v1/knowledge-bases 201"]);
    expect(await paths(`?from=${end}&path=/v1/usage`)).toEqual(["GET /api/v1/usage 200"]);

    for (const bad of ["?method=FOO", "?method=123", "?status=3xx", "?status=6xx", "?status=200", "?status_code=99", "?from=yesterday", "?from=2026-02-30T00:00:00Z", "?to=2026-12-01T25:00:00Z", "?auth_type=password", "?kb_id=doc_1", "?limit=101", "?limit=0", "?cursor=nonsense"]) {
      const res = await list(account, bad);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
    }
    // What the likely mistakes are told: an exact code in status, an offset's "+" left unencoded.
    const messages = async (query: string) => (await list(account, query)).body.error.details.issues.map((i: { message: string }) => i.message);
    expect(await messages("?status=400")).toEqual(['must be one of "2xx", "4xx", "5xx"; for one status code use status_code']);
    expect(await messages("?status=3xx")).toEqual(['must be one of "2xx", "4xx", "5xx"']);
    for (const from of ["2026-12-07T15:00:00+01:00", "2026-12-07%2015:00:00+0100"]) {
      expect(await messages(`?from=${from}`)).toEqual(['must be an ISO 8601 date or date-time; a "+" in a query string reads as a space: write the offset\'s "+" as %2B']);
    }
    expect(await messages("?from=yesterday")).toEqual(["must be an ISO 8601 date or date-time"]);
    expect((await list(account, "?from=2026-12-07T15:00:00%2B01:00")).status).toBe(200);
  });

  test("paginates with an opaque cursor, default 20, max 100, no entry twice", async () => {
    const account = await signup(server);
    for (let i = 0; i < 25; i++) await server.request("GET", "/v1/account", { token: account.apiKey });
    const first = await list(account, "?path=/v1/account");
    expect(first.body.data).toHaveLength(20);
    expect(first.body.meta.has_more).toBe(true);
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: any = await list(account, `?path=/v1/account&limit=7${cursor ? `&cursor=${cursor}` : ""}`);
      for (const entry of page.body.data) seen.add(entry.id);
      cursor = page.body.meta.cursor;
      expect(page.body.meta.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen.size).toBe(25);
    const all = (await list(account, "?path=/v1/account&limit=100")).body.data;
    const keys = all.map((e: any) => `${e.created_at} ${e.id}`);
    expect(keys).toEqual([...keys].sort().reverse());
  });
});

describe("secrets never reach the history", () => {
  test("passwords, API keys, tokens and metadata values are not recorded", async () => {
    const email = `secret${Date.now()}@example.com`;
    const password = "hunter2-very-secret-password";
    const signupRes = await server.request("POST", "/auth/signup", { body: { email, password, name: "Sam" } });
    const { api_key: apiKey, token } = signupRes.body.data;
    const login = await server.request("POST", "/auth/login", { body: { email, password } });
    expect(login.status).toBe(200);
    const regenerated = await server.request("POST", "/auth/api-key/regenerate", { token });
    const newKey = regenerated.body.data.api_key;
    await server.request("POST", "/v1/knowledge-bases", {
      token: newKey,
      body: { name: "kb", metadata: { secret_value: "metadata-value-xyz" }, password, api_key: apiKey, token },
    });
    await server.request("GET", "/v1/knowledge-bases", { token: apiKey }); // the revoked key: 401

    await server.server.ctx.requestLog.flushPending();
    const dump = JSON.stringify(server.server.ctx.db.query("SELECT * FROM request_log").all());
    for (const secret of [password, apiKey, newKey, token, login.body.data.token, "metadata-value-xyz"]) {
      expect(dump).not.toContain(secret);
    }
    const dashboard = await server.request("GET", "/v1/requests?auth_type=jwt&path=regenerate", { token });
    expect(dashboard.body.data).toHaveLength(1);
    expect(dashboard.body.data[0]).toMatchObject({ status_code: 200, request_summary: {}, response_summary: {} });
    const apiCalls = (await server.request("GET", "/v1/requests", { token: newKey })).body.data;
    expect(apiCalls[0].request_summary).toEqual({ name: "kb", metadata_keys: ["secret_value"] });
  });
});

describe("refused credentials", () => {
  test("a valid key an endpoint refuses is the account's 401 and is listed; a revoked key's 401 is nobody's", async () => {
    const account = await signup(server);
    expect((await server.request("POST", "/auth/api-key/regenerate", { token: account.apiKey })).status).toBe(401);
    const regenerated = await server.request("POST", "/auth/api-key/regenerate", { token: account.token });
    const newKey = regenerated.body.data.api_key;
    expect((await server.request("GET", "/v1/knowledge-bases", { token: account.apiKey })).status).toBe(401);
    await server.server.ctx.requestLog.flushPending();
    const listed = (await server.request("GET", "/v1/requests?status_code=401", { token: newKey })).body.data;
    expect(listed.map((entry: { method: string; path: string; auth_type: string }) => [entry.method, entry.path, entry.auth_type])).toEqual([
      ["POST", "/api/auth/api-key/regenerate", "api_key"],
    ]);
  });

  test("a 401 that carried a valid credential it did not use (a failed login sent with the account's token) is nobody's", async () => {
    const account = await signup(server);
    const login = (token: string) => server.request("POST", "/auth/login", { token, body: { email: account.email, password: "not the password" } });
    expect((await login(account.token)).status).toBe(401);
    expect((await login(account.apiKey)).status).toBe(401);
    await server.server.ctx.requestLog.flushPending();
    for (const authType of ["api_key", "jwt"]) {
      const listed = (await server.request("GET", `/v1/requests?status_code=401&auth_type=${authType}`, { token: account.apiKey })).body.data;
      expect(listed).toEqual([]);
    }
  });
});

describe("knowledge-base scoped requests", () => {
  test("uploads, text ingestion and searches carry their kb_id and summaries, never the content", async () => {
    const account = await signup(server);
    const kbId = (await createKb(account, { name: "docs" })).body.data.id;
    const secretText = "The vault combination is 31-41-59 and nobody may know it.";
    const doc = await server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, {
      token: account.apiKey,
      body: { text: secretText, name: "vault.txt", metadata: { owner: "ops" } },
    });
    await waitForDocument(server, account.apiKey, kbId, doc.body.data.id);
    const upload = await server.request("POST", `/v1/knowledge-bases/${kbId}/documents`, {
      token: account.apiKey,
      form: { file: new File([secretText], "copy.md") },
    });
    const search = await server.request("POST", `/v1/knowledge-bases/${kbId}/search`, {
      token: account.apiKey,
      body: { query: "vault combination", top_k: 3, mode: "keyword", filter: { owner: { $eq: "ops" } } },
    });
    expect(search.status).toBe(200);

    const entries = (await list(account, `?kb_id=${kbId}&method=POST`)).body.data;
    const byId = (res: { headers: Headers }) => entries.find((e: any) => e.id === res.headers.get("x-request-id"));
    expect(byId(search)).toMatchObject({
      kb_id: kbId,
      request_summary: { query: "vault combination", top_k: 3, mode: "keyword", filter_keys: ["owner"] },
      response_summary: { result_count: search.body.data.results.length },
    });
    expect(byId(doc)).toMatchObject({ status_code: 202, request_summary: { name: "vault.txt", text_length: secretText.length, metadata_keys: ["owner"] } });
    expect(byId(upload)).toMatchObject({ status_code: 202, request_summary: { file_name: "copy.md", file_size_bytes: secretText.length } });
    await server.server.ctx.requestLog.flushPending();
    expect(JSON.stringify(server.server.ctx.db.query("SELECT * FROM request_log").all())).not.toContain("31-41-59");
  });
});

describe("retention", () => {
  test("entries older than 30 days are pruned", async () => {
    const account = await signup(server);
    const old = await server.request("GET", "/v1/account", { token: account.apiKey });
    clock.advance(29 * 24 * 3600_000);
    const recent = await server.request("GET", "/v1/usage", { token: account.apiKey });
    clock.advance(2 * 24 * 3600_000);
    const ids = (await list(account)).body.data.map((e: any) => e.id);
    expect(ids).toContain(recent.headers.get("x-request-id"));
    expect(ids).not.toContain(old.headers.get("x-request-id"));
    const gone = await server.request("GET", `/v1/requests/${old.headers.get("x-request-id")}`, { token: account.apiKey });
    expect(gone.status).toBe(404);
  });

  test("a month's backlog is never listed, and is pruned a batch at a time until none older than 30 days is left; newer entries stay", async () => {
    const account = await signup(server);
    const { db } = server.server.ctx;
    const now = clock.now().getTime();
    const entry = (i: number, ageMs: number): RequestLogRecord => ({
      accountId: account.id,
      id: `req_backlog${String(i).padStart(6, "0")}`,
      method: "GET",
      path: "/api/v1/usage",
      status_code: 200,
      duration_ms: 1,
      auth_type: "api_key",
      kb_id: null,
      request_summary: {},
      response_summary: {},
      created_at: new Date(now - ageMs).toISOString(),
    });
    // 2,500 entries from 31 days ago (three of the writer's batches), 10 from 29 days ago.
    const day = 24 * 3600_000;
    db.transaction(() => insertRequestLog(db, [...Array.from({ length: 2_500 }, (_, i) => entry(i, 31 * day + i)), ...Array.from({ length: 10 }, (_, i) => entry(2_500 + i, 29 * day))]))();
    const backlog = () => db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM request_log WHERE id LIKE 'req_backlog%'").get()!.n;
    expect(backlog()).toBe(2_510);
    // Not pruned yet (the last prune was less than an hour ago), and yet neither listed nor found.
    const listed = (await list(account, "?limit=100")).body.data.map((e: any) => e.id).filter((id: string) => id.startsWith("req_backlog"));
    expect(listed.sort()).toEqual(Array.from({ length: 10 }, (_, i) => entry(2_500 + i, 0).id));
    expect((await server.request("GET", `/v1/requests/${entry(0, 0).id}`, { token: account.apiKey })).status).toBe(404);
    expect(backlog()).toBe(2_510);
    // The next write after the hourly mark prunes.
    clock.advance(3600_000 + 1);
    await server.request("GET", "/v1/usage", { token: account.apiKey });
    await server.server.ctx.requestLog.flushPending();
    await until(() => backlog() === 10, "the backlog to be pruned", 5_000);
    expect((await list(account)).body.data.map((e: any) => e.id)).toEqual(expect.arrayContaining([entry(2_500, 0).id]));
  });
});

describe("bounds on what is kept", () => {
  const unattributed = () => server.server.ctx.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM request_log WHERE account_id IS NULL").get()!.n;

  test("requests of no account are kept 10 a second at most, each path cut to 512 characters; an account's are all kept", async () => {
    await server.server.ctx.requestLog.flushPending();
    clock.advance(1000); // a second of its own
    const before = unattributed();
    const path = `/nope/${"p".repeat(15_000)}`;
    const flood = await Promise.all(Array.from({ length: 50 }, () => server.request("GET", path, { token: "qk_not-a-real-key" })));
    expect(flood.every((res) => res.status === 404)).toBe(true);
    await server.server.ctx.requestLog.flushPending();
    expect(unattributed() - before).toBe(UNATTRIBUTED_PER_SECOND);
    const longest = server.server.ctx.db.query<{ length: number }, []>("SELECT MAX(length(path)) AS length FROM request_log").get()!.length;
    expect(longest).toBe(MAX_PATH_CHARS);
    // The next second keeps 10 more.
    clock.advance(1000);
    await Promise.all(Array.from({ length: 20 }, () => server.request("GET", "/nope", {})));
    await server.server.ctx.requestLog.flushPending();
    expect(unattributed() - before).toBe(2 * UNATTRIBUTED_PER_SECOND);
    // An account's own requests, refused ones included, are all in its history, their paths cut likewise.
    const account = await signup(server);
    const own = await Promise.all(Array.from({ length: 30 }, () => server.request("GET", path, { token: account.apiKey })));
    const listed = (await list(account, "?limit=100&method=GET&status=4xx")).body.data;
    expect(listed.map((entry: { id: string }) => entry.id).sort()).toEqual(own.map((res) => res.headers.get("x-request-id")).sort());
    expect(listed[0].path).toBe(`${`/api${path}`.slice(0, MAX_PATH_CHARS - 1)}…`);
  });

  test("requests of no account are pruned after a day, an account's after 30", async () => {
    const account = await signup(server);
    await server.request("GET", "/nope", {});
    const kept = await server.request("GET", "/v1/usage", { token: account.apiKey });
    await server.server.ctx.requestLog.flushPending();
    expect(unattributed()).toBeGreaterThan(0);
    clock.advance(24 * 3600_000 + 3600_000 + 1); // past a day, and past the hourly mark of the next prune
    await server.request("GET", "/v1/usage", { token: account.apiKey });
    await server.server.ctx.requestLog.flushPending();
    await until(() => unattributed() === 0, "the entries of no account to be pruned", 5_000);
    expect((await server.request("GET", `/v1/requests/${kept.headers.get("x-request-id")}`, { token: account.apiKey })).status).toBe(200);
  });
});
