// The error envelope for everything that can go wrong at the HTTP edge, and the request id header.
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { signup, startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { join } from "node:path";
import { canMountSmallDisk, mountSmallDisk } from "../helpers/small-disk.ts";
import { DEFAULT_PARSE_MEMORY_MB } from "../../src/config.ts";
import { rawExchange, type RawResponse } from "../helpers/raw-http.ts";

const CONTENT_TYPE_RULE = "must be application/json, or multipart/form-data for document uploads and replacements";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
});
afterAll(() => server.stop());

function expectEnvelope(body: any, code: string) {
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
}

describe("error envelope", () => {
  test("unknown routes and wrong methods are NOT_FOUND envelopes", async () => {
    for (const [method, path] of [["GET", "/nope"], ["GET", "/v2/knowledge-bases"], ["PUT", "/v1/knowledge-bases"], ["DELETE", "/auth/signup"]]) {
      const res = await server.request(method, path);
      expect(res.status).toBe(404);
      expectEnvelope(res.body, "NOT_FOUND");
    }
    // …/documents/text takes POST only: its other methods are no route either, not a document id "text" (400)
    const account = await signup(server);
    for (const method of ["GET", "PUT", "PATCH", "DELETE"]) {
      for (const token of [account.apiKey, undefined]) {
        const res = await server.request(method, "/v1/knowledge-bases/kb_x/documents/text", { token });
        expect([method, res.status, res.body.error]).toEqual([method, 404, { code: "NOT_FOUND", message: `Route not found: ${method} /api/v1/knowledge-bases/kb_x/documents/text` }]);
      }
    }
  });

  test("answers are labelled plain application/json, errors and successes alike; the docs page stays HTML", async () => {
    const account = await signup(server);
    const answers = [
      await fetch(`${server.url}/v1/knowledge-bases`, { headers: { authorization: `Bearer ${account.apiKey}` } }),
      await fetch(`${server.url}/v1/knowledge-bases`),
      await fetch(`${server.url}/nope`),
      await fetch(server.url),
      await fetch(`${server.url}/v1/knowledge-bases`, { method: "POST", headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" }, body: "{" }),
    ];
    expect(answers.map((res) => [res.status, res.headers.get("content-type")])).toEqual([200, 401, 404, 404, 400].map((status) => [status, "application/json"]));
    expect((await fetch(`${server.url}/docs`)).headers.get("content-type")).toBe("text/html; charset=utf-8");
    // outside /api too: an unknown path's 404
    expect((await fetch(`${server.url.replace(/\/api$/, "")}/nope`)).headers.get("content-type")).toBe("application/json");
  });

  test("malformed JSON, a wrong content type and an oversized body are VALIDATION_ERROR 400", async () => {
    const account = await signup(server);
    const malformed = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: '{"name": ' });
    expect(malformed.status).toBe(400);
    expectEnvelope(malformed.body, "VALIDATION_ERROR");
    expect(Array.isArray(malformed.body.error.details.issues)).toBe(true);
    // On /v1 the credential is checked first: an unauthenticated request's body is never judged.
    for (const token of [undefined, "qk_not-a-key"]) {
      const unauthenticated = await server.request("POST", "/v1/knowledge-bases", { token, body: '{"name": ' });
      expect(unauthenticated.status).toBe(401);
      expectEnvelope(unauthenticated.body, "AUTHENTICATION_ERROR");
      const form = await server.request("POST", "/v1/knowledge-bases", { token, body: "name=x", headers: { "content-type": "text/plain" } });
      expect(form.status).toBe(401);
    }

    const wrongType = await server.request("POST", "/v1/knowledge-bases", {
      token: account.apiKey,
      body: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(wrongType.status).toBe(400);
    expectEnvelope(wrongType.body, "VALIDATION_ERROR");
    // Only application/json itself: a JSON Patch or a vendor type is not a body of fields (it was applied as one).
    for (const type of ["application/json-patch+json", "application/merge-patch+json", "application/vnd.foo+json", "application/jsonx"]) {
      const other = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: '{"name":"x"}', headers: { "content-type": type } });
      expect([type, other.status, other.body.error.details.issues[0].path]).toEqual([type, 400, ["headers", "content-type"]]);
    }
    const withCharset = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: '{"name":"x"}', headers: { "content-type": "Application/JSON; charset=utf-8" } });
    expect(withCharset.status).toBe(201);
    // No Content-Type at all (Python's requests with data=json.dumps(...)): read as JSON, the wire format
    const untyped = (path: string, body: string, token?: string) =>
      fetch(`${server.url}${path}`, { method: "POST", headers: token ? { authorization: `Bearer ${token}` } : {}, body: new TextEncoder().encode(body) });
    const noType = await untyped("/v1/knowledge-bases", '{"name":"untyped"}', account.apiKey);
    expect([noType.status, (await noType.json()).data.name]).toEqual([201, "untyped"]);
    const notJson = await untyped("/v1/knowledge-bases", "name=x", account.apiKey);
    expect([notJson.status, (await notJson.json()).error.message]).toEqual([400, "Request body is not valid JSON"]);
    const untypedSignup = await untyped("/auth/signup", JSON.stringify({ email: "untyped@example.com", password: "password123" }));
    expect(untypedSignup.status).toBe(201);
    // JSON is UTF-8: Latin-1 bytes are refused, not stored as U+FFFD; a UTF-8 byte order mark is fine
    const latin1 = await fetch(`${server.url}/v1/knowledge-bases`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json; charset=iso-8859-1" },
      body: new Uint8Array([...new TextEncoder().encode('{"name":"caf'), 0xe9, ...new TextEncoder().encode('"}')]),
    });
    expect([latin1.status, (await latin1.json()).error.details.issues]).toEqual([400, [{ path: [], message: "is not valid UTF-8" }]]);
    const withBom = await fetch(`${server.url}/v1/knowledge-bases`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" },
      body: new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"name":"café"}')]),
    });
    expect([withBom.status, (await withBom.json()).data.name]).toEqual([201, "café"]);
    // A compressed body is refused as such, not read as bad JSON; a plain one labelled with an unknown coding is not taken either
    const gzipped = await fetch(`${server.url}/v1/knowledge-bases`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json", "content-encoding": "gzip" },
      body: Bun.gzipSync(JSON.stringify({ name: "zipped" })),
    });
    expect([gzipped.status, (await gzipped.json()).error]).toEqual([
      400,
      {
        code: "VALIDATION_ERROR",
        message: 'Unsupported Content-Encoding "gzip": send the body uncompressed, without a Content-Encoding header',
        details: { issues: [{ path: ["headers", "content-encoding"], message: "is not supported: send the body uncompressed" }] },
      },
    ]);
    for (const coding of ["br", "x-unknown"]) {
      const labelled = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "plain" }, headers: { "content-encoding": coding } });
      expect([coding, labelled.status, labelled.body.error?.details.issues[0].path]).toEqual([coding, 400, ["headers", "content-encoding"]]);
    }
    const identity = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "plain" }, headers: { "content-encoding": "identity, IDENTITY" } });
    expect(identity.status).toBe(201);
    // A body that is not read (a GET's) is not judged by its coding either
    const bodiless = await server.request("DELETE", "/v1/knowledge-bases/kb_nothing0000000000", { token: account.apiKey, headers: { "content-encoding": "gzip" } });
    expect([bodiless.status, bodiless.body.error.code]).toEqual([404, "NOT_FOUND"]);
    const webhook = await server.request("POST", "/webhooks/payments", { body: { event: "x" }, headers: { "content-encoding": "gzip" } });
    expect([webhook.status, webhook.body.error.details?.issues[0].path]).toEqual([400, ["headers", "content-encoding"]]);
    const unread = await rawRequest(`GET /api/v1/knowledge-bases HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${account.apiKey}\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    expect(unread.status).toBe(200);
    // An escaped lone surrogate becomes U+FFFD everywhere, metadata too (strict JSON parsers refuse one); a pair stays
    const surrogates = await server.request("POST", "/v1/knowledge-bases", {
      token: account.apiKey,
      body: String.raw`{"name":"s\ud800","description":"\\ud800 \udc00","metadata":{"k\uD800":["v\ud800\ud800\ud83d\ude00"]}}`,
    });
    expect(surrogates.status).toBe(201);
    expect(surrogates.body.data).toMatchObject({ name: "s\ufffd", description: "\\ud800 \ufffd", metadata: { "k\ufffd": ["v\ufffd\ufffd😀"] } });
    // after an escaped backslash too; keys that become one keep the first's place and the last's value, as repeated keys do
    const merged = await server.request("POST", "/v1/knowledge-bases", {
      token: account.apiKey,
      body: String.raw`{"name":"m","metadata":{"b\ud800":1,"a":"\\ud800\udc00","\ufffd":2,"b\ufffd":3,"\udfff":4}}`,
    });
    expect(JSON.stringify(merged.body.data.metadata)).toBe(JSON.stringify({ "b\ufffd": 3, a: "\\ud800\ufffd", "\ufffd": 4 }));
    const upload = await server.request("POST", `/v1/knowledge-bases/${surrogates.body.data.id}/documents`, {
      token: account.apiKey,
      form: { file: new File(["text"], "a.txt"), metadata: String.raw`{"team":"x\udfff"}` },
    });
    expect([upload.status, upload.body.data.metadata]).toEqual([202, { team: "x\ufffd" }]);

    const huge = await fetch(`${server.url}/v1/knowledge-bases`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "x", description: "y".repeat(52 * 1024 * 1024) }),
    });
    expect(huge.status).toBe(400);
    expectEnvelope(await huge.json(), "VALIDATION_ERROR");

    // the same without a Content-Length (chunked): cut off at the limit, still the envelope
    const megabyte = new Uint8Array(1024 * 1024).fill(0x61);
    let sent = 0;
    const chunked = await fetch(`${server.url}/v1/knowledge-bases`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" },
      body: new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 60) controller.enqueue(megabyte);
          else controller.close();
        },
      }),
    });
    expect(chunked.status).toBe(400);
    expect(chunked.headers.get("x-request-id")).toMatch(/^req_/);
    const chunkedBody = await chunked.json();
    expectEnvelope(chunkedBody, "VALIDATION_ERROR");
    expect(chunkedBody.error.details.issues[0].path).toEqual(["body"]);

    // "per file" only where a file is sent; other JSON bodies are capped at 1 MB
    const tooLarge = async (path: string, method = "POST") => {
      const head = `${method} /api${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${account.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${60 * 1024 * 1024}\r\n\r\n`;
      return (await rawRequest(head)).body.error.details.issues[0].message as string;
    };
    expect(await tooLarge("/v1/knowledge-bases/kb_x/search")).toBe("is too large: 62914560 bytes; the maximum is 1048576 bytes");
    expect(await tooLarge("/v1/knowledge-bases/kb_x/documents")).toEndWith("the maximum is 53477376 bytes (50 MB per file)");
    expect(await tooLarge("/v1/knowledge-bases/kb_x/documents/doc_x", "PUT")).toEndWith("(50 MB per file)");
    expect(await tooLarge("/v1/knowledge-bases/kb_x/documents/doc_x", "PATCH")).toEndWith("the maximum is 1048576 bytes");
    // A trailing slash is the same route, with the same cap (the 1 MB of other JSON bodies took uploads sent to .../documents/)
    expect(await tooLarge("/v1/knowledge-bases/kb_x/documents/")).toEndWith("the maximum is 53477376 bytes (50 MB per file)");
    expect(await tooLarge("/v1/knowledge-bases/kb_x/documents/doc_x/", "PUT")).toEndWith("(50 MB per file)");
    expect(await tooLarge("/v1/knowledge-bases/kb_x/documents/text/")).toEndWith("the maximum is 61048576 bytes (10000000 characters of text)");
    // Past twice the upload cap too (Bun's own limit answered a bare 413 there, with no envelope), whatever the length
    for (const declared of [2 * 51 * 1024 * 1024 + 1, 10 * 1024 ** 3, "9007199254740993"]) {
      const head = `POST /api/v1/knowledge-bases/kb_x/documents HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${account.apiKey}\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: ${declared}\r\n\r\n`;
      const res = await rawRequest(head);
      expect(res.status).toBe(400);
      expect(res.headers["x-request-id"]).toMatch(/^req_/);
      expect(res.body.error.details.issues).toEqual([{ path: ["body"], message: `is too large: ${declared} bytes; the maximum is 53477376 bytes (50 MB per file)` }]);
    }
  });

  test("a multipart body on a JSON endpoint is refused like any other wrong content type", async () => {
    const account = await signup(server);
    const calls: [string, Record<string, string>, string | undefined][] = [
      ["/v1/knowledge-bases", { name: "from a form" }, account.apiKey],
      ["/auth/signup", { email: "form@example.com", password: "password123" }, undefined],
    ];
    for (const [path, form, token] of calls) {
      const res = await server.request("POST", path, { token, form });
      expect(res.status).toBe(400);
      expectEnvelope(res.body, "VALIDATION_ERROR");
      expect(res.body.error.details.issues).toEqual([{ path: ["headers", "content-type"], message: CONTENT_TYPE_RULE }]);
    }
    const garbled = { "content-type": "multipart/form-data; boundary=xyz" };
    const notAForm = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: "garbage", headers: garbled });
    expect(notAForm.status).toBe(400);
    expect(notAForm.body.error.details.issues).toEqual([{ path: ["headers", "content-type"], message: CONTENT_TYPE_RULE }]);
    const kb = (await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "uploads" } })).body.data;
    const badUpload = await server.request("POST", `/v1/knowledge-bases/${kb.id}/documents`, { token: account.apiKey, body: "garbage", headers: garbled });
    expect(badUpload.status).toBe(400);
    expectEnvelope(badUpload.body, "VALIDATION_ERROR");
    expect(badUpload.body.error.message).toBe("Request body is not valid multipart/form-data");
    const rawUpload = await server.request("POST", `/v1/knowledge-bases/${kb.id}/documents`, {
      token: account.apiKey,
      body: "plain bytes",
      headers: { "content-type": "application/octet-stream" },
    });
    expect(rawUpload.status).toBe(400);
    // An upload is told to send a form, not JSON.
    expect(rawUpload.body.error.details.issues).toEqual([{ path: ["headers", "content-type"], message: "must be multipart/form-data" }]);
    expect(rawUpload.body.error.message).toStartWith('Unsupported Content-Type "application/octet-stream": this endpoint takes multipart/form-data');
    expect((await server.request("GET", "/v1/knowledge-bases", { token: account.apiKey })).body.data.map((k: { id: string }) => k.id)).toEqual([kb.id]);
    const login = await server.request("POST", "/auth/login", { body: { email: "form@example.com", password: "password123" } });
    expect(login.status).toBe(401);
  });

  test("validation issues carry the path as an array", async () => {
    const account = await signup(server);
    const res = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "ok", metadata: "nope" } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.issues).toEqual([{ path: ["metadata"], message: expect.any(String) }]);
  });

  test("validation messages say what is wanted in plain words", async () => {
    const account = await signup(server);
    const issuesOf = async (path: string, body: unknown) => (await server.request("POST", path, { token: account.apiKey, body })).body.error.details.issues;
    expect(await issuesOf("/auth/signup", { email: "plain@example.com", password: "short" })).toEqual([{ path: ["password"], message: "must be at least 8 characters" }]);
    expect(await issuesOf("/v1/knowledge-bases", { name: "" })).toEqual([{ path: ["name"], message: "must not be empty" }]);
    expect(await issuesOf("/v1/knowledge-bases", { description: "x" })).toEqual([{ path: ["name"], message: "is required" }]);
    expect(await issuesOf("/v1/knowledge-bases", { name: 5 })).toEqual([{ path: ["name"], message: "must be a string, not a number" }]);
    const kb = (await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "messages" } })).body.data;
    expect(await issuesOf(`/v1/knowledge-bases/${kb.id}/search`, { query: "x", top_k: 2.5, mode: "fast", alpha: 2, rerank: "yes" })).toEqual([
      { path: ["top_k"], message: "must be a whole number" },
      { path: ["rerank"], message: "must be true or false, not a string" },
      { path: ["mode"], message: 'must be one of "vector", "keyword", "hybrid"' },
      { path: ["alpha"], message: "must be at most 1" },
    ]);
    // JSON numbers too large for a double arrive as Infinity
    const huge = await server.request("POST", `/v1/knowledge-bases/${kb.id}/search`, { token: account.apiKey, body: '{"query":"x","top_k":1e400,"score_threshold":-1e400}' });
    expect(huge.body.error.details.issues).toEqual([
      { path: ["top_k"], message: "must be a finite number" },
      { path: ["score_threshold"], message: "must be a finite number" },
    ]);
    // No body at all is said to be empty; a JSON null sent is named as such.
    const json = { "content-type": "application/json" };
    for (const [method, path] of [["POST", "/v1/knowledge-bases"], ["PATCH", `/v1/knowledge-bases/${kb.id}`], ["POST", `/v1/knowledge-bases/${kb.id}/search`]] as const) {
      for (const headers of [json, {}]) {
        const empty = await server.request(method, path, { token: account.apiKey, headers });
        expect(empty.body.error).toEqual({ code: "VALIDATION_ERROR", message: "is empty: send a JSON object", details: { issues: [{ path: [], message: "is empty: send a JSON object" }] } });
      }
      const sentNull = await server.request(method, path, { token: account.apiKey, headers: json, body: "null" });
      expect(sentNull.body.error.details.issues).toEqual([{ path: [], message: "must be a JSON object, not null" }]);
    }
  });

  test("null for an optional field of a new knowledge base or text means absent", async () => {
    const account = await signup(server);
    const kb = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "nulls", description: null, metadata: null } });
    expect([kb.status, kb.body.data.description, kb.body.data.metadata]).toEqual([201, null, {}]);
    const text = await server.request("POST", `/v1/knowledge-bases/${kb.body.data.id}/documents/text`, { token: account.apiKey, body: { text: "Null means absent.", name: null, metadata: null } });
    expect(text.status).toBe(202);
    expect(text.body.data.name).toBe(`text-${text.body.data.created_at}.txt`);
    expect(text.body.data.metadata).toEqual({});
    // a PATCH is different: null clears the description, and metadata cannot be null
    const patched = await server.request("PATCH", `/v1/knowledge-bases/${kb.body.data.id}`, { token: account.apiKey, body: { metadata: null } });
    expect([patched.status, patched.body.error.details.issues[0].path]).toEqual([400, ["metadata"]]);
  });

  test("every response carries a unique X-Request-Id", async () => {
    const account = await signup(server);
    const ids = new Set<string>();
    for (const res of [
      await server.request("GET", "/health"),
      await server.request("GET", "/v1/knowledge-bases", { token: account.apiKey }),
      await server.request("GET", "/v1/knowledge-bases"),
      await server.request("GET", "/missing"),
    ]) {
      const id = res.headers.get("x-request-id");
      expect(id).toMatch(/^req_[0-9a-z]{26}$/);
      ids.add(id!);
    }
    expect(ids.size).toBe(4);
  });

  test("no answer may be cached or sniffed: the one with a new API key, a list, an error, the docs", async () => {
    const signedUp = await server.request("POST", "/auth/signup", { body: { email: "no-store@example.com", password: "correct horse battery" } });
    expect(signedUp.body.data.api_key).toStartWith("qk_");
    for (const res of [
      signedUp,
      await server.request("GET", "/v1/knowledge-bases", { token: signedUp.body.data.api_key }),
      await server.request("GET", "/missing"),
      await server.request("GET", "/docs"),
      await server.request("GET", "/openapi.json"),
    ]) {
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  test("/health, which answers anyone, names no path on the server", async () => {
    const res = await server.request("GET", "/health");
    expect(res.body.models.reranking_hint).toContain("QUARRY_MODELS_DIR");
    expect(JSON.stringify(res.body)).not.toContain(process.cwd());
  });

  test("a request without a usable Host header (HTTP/1.0 sends none) is answered like any other", async () => {
    const account = await signup(server);
    const auth = `Authorization: Bearer ${account.apiKey}\r\n`;
    const body = JSON.stringify({ name: "over HTTP/1.0" });
    const created = await rawRequest(`POST /api/v1/knowledge-bases HTTP/1.0\r\n${auth}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expect(created.status).toBe(201);
    const kbId = created.body.data.id;
    expect((await rawRequest(`GET /api/v1/knowledge-bases/${kbId} HTTP/1.0\r\n${auth}\r\n`)).body.data.name).toBe("over HTTP/1.0");
    const health = await rawRequest("GET /api/health HTTP/1.0\r\n\r\n");
    expect([health.status, health.body.status]).toEqual([200, "ok"]);
    // Empty, unparsable (a port out of range, a lone bracket) and very short hosts (Elysia's own path cut
    // "http://q/api/v1/…" to "/v1/…", and the request history dropped the request).
    const listedIds: string[] = [];
    for (const host of ["Host: \r\n", "Host: a b\r\n", "Host: x:99999\r\n", "Host: [\r\n", "Host: q\r\n"]) {
      const listed = await rawRequest(`GET /api/v1/knowledge-bases/${kbId}/documents?limit=1 HTTP/1.1\r\n${host}${auth}Connection: close\r\n\r\n`);
      expect([host, listed.status, listed.body]).toEqual([host, 200, { data: [], meta: { cursor: null, has_more: false } }]);
      listedIds.push(listed.headers["x-request-id"]);
      const missing = await rawRequest(`GET /api/nope HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
      expect(missing.status).toBe(404);
      expect(missing.headers["content-type"]).toStartWith("application/json");
      expectEnvelope(missing.body, "NOT_FOUND");
      expect(missing.body.error.message).toBe("Route not found: GET /api/nope");
    }
    await server.server.ctx.requestLog.flushPending();
    for (const id of listedIds) {
      const entry = await server.request("GET", `/v1/requests/${id}`, { token: account.apiKey });
      expect([entry.status, entry.body.data?.path, entry.body.data?.kb_id]).toEqual([200, `/api/v1/knowledge-bases/${kbId}/documents`, kbId]);
    }
  });
});

/** Sends `head` as written on its own connection and reads the response until the server closes it. */
function rawRequest(head: string): Promise<RawResponse> {
  return rawExchange(server.server.port, head);
}

describe("a response that fails its own schema", () => {
  test("is a 500 INTERNAL_ERROR, the server's fault, not a 400 blamed on the client", async () => {
    const account = await signup(server);
    // A history entry no route could write: a status code outside 100-599.
    server.server.ctx.db
      .query("INSERT INTO request_log (id, account_id, method, path, status_code, duration_ms, auth_type, created_at) VALUES (?, ?, 'GET', '/api/x', 700, 1, 'api_key', ?)")
      .run("req_broken", account.id, new Date().toISOString());
    const res = await server.request("GET", "/v1/requests/req_broken", { token: account.apiKey });
    expect([res.status, res.body.error]).toEqual([500, { code: "INTERNAL_ERROR", message: "Internal server error" }]);
  });
});

describe("a full disk", () => {
  test("a write the database has no room for is INTERNAL_ERROR saying so, and the service carries on once there is room", async () => {
    const own = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
    try {
      const account = await signup(own);
      const { db } = own.server.ctx;
      // The database may not grow past its current size: SQLite answers SQLITE_FULL, as on a full disk.
      const pages = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
      db.exec(`PRAGMA max_page_count = ${pages}`);
      let res;
      for (let i = 0; i < 200; i++) {
        res = await own.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: `kb ${i}`, description: "x".repeat(1000) } });
        if (res.status !== 201) break;
      }
      expect(res!.status).toBe(500);
      expectEnvelope(res!.body, "INTERNAL_ERROR");
      expect(res!.body.error.message).toBe("The server is out of disk space; try again once an operator has freed some");
      db.exec("PRAGMA max_page_count = 4294967294");
      expect((await own.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "after" } })).status).toBe(201);
    } finally {
      await own.stop();
    }
  });

  /** A server whose data dir is on a small file system of its own, with a knowledge base. */
  async function onSmallDisk(env: Record<string, string>) {
    const disk = mountSmallDisk("48m")!;
    const own = await startTestServer({ dataDir: join(disk.path, "data"), env: { QUARRY_LIMITS: "off", ...env } });
    const account = await signup(own);
    const kb = (await own.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "full" } })).body.data;
    const docs = `/v1/knowledge-bases/${kb.id}/documents`;
    return {
      own,
      disk,
      add: async (name: string, paragraphs: number) => {
        const text = Array.from({ length: paragraphs }, (_, i) => `Paragraph ${i} on the tides, the moon and the shallow bays of the northern coast.`).join("\n\n");
        const added = await own.request("POST", `${docs}/text`, { token: account.apiKey, body: { text, name } });
        expect(added.status).toBe(202);
        return added.body.data.id as string;
      },
      status: async (id: string) => (await own.request("GET", `${docs}/${id}`, { token: account.apiKey })).body.data.status as string,
      settled: (id: string, timeoutMs?: number) => waitForDocument(own, account.apiKey, kb.id, id, timeoutMs),
      replace: (id: string, text: string) => own.request("PUT", `${docs}/${id}`, { token: account.apiKey, form: { file: new File([text], "tides.txt") } }),
      async close() {
        await own.stop();
        disk.unmount();
      },
    };
  }

  test.if(canMountSmallDisk)("a document whose processing meets a full disk fails saying so and what to do; a replacement once there is room is processed", async () => {
    const full = await onSmallDisk({ QUARRY_WORKERS: "1" });
    try {
      const id = await full.add("tides.txt", 12_000);
      while ((await full.status(id)) === "pending") await Bun.sleep(20);
      full.disk.fill(400); // room for status writes, none for its chunks
      const failed = await full.settled(id);
      expect([failed.status, failed.error_detail]).toEqual([
        "failed",
        "Processing failed: the server ran out of disk space. Replace the document (PUT) to process it again once space is freed",
      ]);
      full.disk.free();
      expect((await full.replace(id, "The tides follow the moon.")).status).toBe(202);
      expect((await full.settled(id)).status).toBe("ready");
    } finally {
      await full.close();
    }
  });

  test.if(canMountSmallDisk)("a document the disk has no room to start stays queued, the server answering meanwhile, and is processed once there is room; so is the one it cut short", async () => {
    const full = await onSmallDisk({ QUARRY_WORKERS: "1" });
    const errors = spyOn(console, "error");
    try {
      const first = await full.add("long.txt", 12_000);
      const queued = await full.add("short.txt", 3);
      while ((await full.status(first)) === "pending") await Bun.sleep(20);
      full.disk.fill(0); // the first one's end and the next one's start find no room
      for (let i = 0; i < 20 && (await full.status(first)) !== "failed"; i++) await Bun.sleep(250);
      expect((await full.own.request("GET", "/health")).status).toBe(200);
      expect(await full.status(queued)).toBe("pending");
      full.disk.free();
      expect((await full.settled(queued)).status).toBe("ready");
      // The first one, whose failure could not be written either, does not keep its processing status.
      expect(["ready", "failed"]).toContain((await full.settled(first, 30_000)).status);
      // The request log, failing at every flush while the disk was full, said so once, and once that it wrote again.
      await full.own.server.ctx.requestLog.flushPending();
      const said = (start: string) => errors.mock.calls.filter(([line]) => String(line).startsWith(start)).length;
      expect([said("request log: could not write"), said("request log: written again")]).toEqual([1, 1]);
    } finally {
      errors.mockRestore();
      await full.close();
    }
  });
});

describe("service endpoints", () => {
  test("GET /health needs no auth and names the models", async () => {
    const res = await server.request("GET", "/health");
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ok");
    expect(typeof res.body.version).toBe("string");
    expect(res.body.models).toEqual({
      embedding: { id: "use-lite", dimension: 512, max_tokens: 2048 },
      reranker: null,
      reranking_hint: expect.stringContaining("QUARRY_RERANK_MODEL"),
    });
  });

  test("the API reference page renders the description's tables and lists (its own script, on the served document)", async () => {
    const page = await (await fetch(`${server.url}/docs`)).text();
    const script = page.slice(page.indexOf("<script>") + "<script>".length, page.indexOf("</script>"));
    // The page's helpers, without the fetch that draws the page in a browser.
    const md = new Function(`${script.slice(0, script.indexOf("fetch("))}; return md;`)() as (text: string) => string;
    const description: string = (await server.request("GET", "/openapi.json")).body.info.description;
    const html = md(description);
    const plans = html.slice(html.indexOf("<table>"), html.indexOf("</table>"));
    expect(plans.match(/<th>[^<]*<\/th>/g)).toEqual(["<th></th>", "<th>trial</th>", "<th>starter</th>", "<th>pro</th>", "<th>business</th>", "<th>scale</th>"]);
    expect(plans).toContain("<tr><td>Requests per second</td><td>5</td><td>10</td><td>50</td><td>100</td><td>200</td></tr>");
    expect(html).toContain("<p><strong>Usage limits.</strong> Allowances are per billing period: monthly, anchored at signup, or at the start of the paid subscription once there is one;");
    const usageList = html.slice(html.indexOf("<ul>", html.indexOf("Usage limits.")), html.indexOf("</ul>", html.indexOf("Usage limits.")));
    expect(usageList.match(/<li>/g)).toHaveLength(4);
    expect(usageList).toContain("<code>{limit, current_usage, plan, requested}</code>");
    expect(html).not.toMatch(/\|---|<p>- /);
    // **bold** and `code` become tags; anything else stays escaped.
    expect(md("**Errors.** Send `Authorization: Bearer <key>` <b> &")).toBe(
      "<p><strong>Errors.</strong> Send <code>Authorization: Bearer &lt;key&gt;</code> &lt;b&gt; &amp;</p>",
    );
  });

  test("the OpenAPI 3.1 document covers every endpoint with schemas and error responses", async () => {
    const res = await server.request("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toStartWith("3.1");
    const paths = res.body.paths;
    for (const path of ["/api/auth/signup", "/api/auth/login", "/api/auth/api-key/regenerate", "/api/v1/knowledge-bases", "/api/v1/knowledge-bases/{kb_id}", "/api/health"]) {
      expect(paths[path]).toBeDefined();
    }
    // choices the spec leaves open are stated in the document
    expect(res.body.info.description).toContain("Route not found: <METHOD> <path>");
    expect(res.body.info.description).toContain('["query","limit"]');
    // the metrics route names its own credential, the server's metrics token, instead of "no security"
    expect(paths["/api/metrics"].get.security).toEqual([{ metricsToken: [] }]);
    expect(res.body.components.securitySchemes.metricsToken).toMatchObject({ type: "http", scheme: "bearer" });
    expect(paths["/api/health"].get.security).toEqual([]);
    const create = paths["/api/v1/knowledge-bases"].post;
    expect(create.requestBody.content["application/json"].schema.properties.name.maxLength).toBe(256);
    expect(create.responses["201"]).toBeDefined();
    expect(create.responses["400"]).toBeDefined();
    expect(create.responses["401"]).toBeDefined();
    // every timestamp a response carries is typed as a date-time, wherever it appears
    const timestamps: [string, unknown][] = [];
    const walk = (node: unknown, path: string) => {
      if (node === null || typeof node !== "object") return;
      for (const [key, value] of Object.entries(node)) {
        if (/(_at|_start|_end)$/.test(key) && !key.endsWith("_page") && typeof value === "object" && (value as { type?: string }).type === "string") {
          timestamps.push([`${path}.${key}`, (value as { format?: string }).format]);
        }
        walk(value, `${path}.${key}`);
      }
    };
    walk(paths, "paths");
    expect(timestamps.length).toBeGreaterThanOrEqual(15);
    expect(timestamps.filter(([, format]) => format !== "date-time")).toEqual([]);
    // every operation has its own camelCase operationId, for client generators
    const operationIds = Object.values(paths).flatMap((methods: any) => Object.values(methods).map((operation: any) => operation.operationId));
    expect(operationIds.length).toBeGreaterThanOrEqual(24);
    expect(operationIds.filter((id) => !/^[a-z][A-Za-z]*$/.test(id))).toEqual([]);
    expect(new Set(operationIds).size).toBe(operationIds.length);
    expect([create.operationId, paths["/api/v1/knowledge-bases/{kb_id}/search"].post.operationId]).toEqual(["createKnowledgeBase", "search"]);
    // what responses carry is typed as tightly as it is sent: prefixed ids, counts never negative, scores 0-1
    const kb = create.responses["201"].content["application/json"].schema.properties.data.properties;
    expect([kb.id.pattern, kb.account_id.pattern, kb.document_count.minimum]).toEqual(["^kb_.+$", "^acc_.+$", 0]);
    const result = paths["/api/v1/knowledge-bases/{kb_id}/search"].post.responses["200"].content["application/json"].schema.properties.data.properties.results.items.properties;
    expect([result.chunk_id.pattern, result.document_id.pattern, result.score.minimum, result.score.maximum]).toEqual(["^chk_.+$", "^doc_.+$", 0, 1]);
    // the documented defaults are the ones the server uses
    expect(res.body.info.description).toContain(`QUARRY_PARSE_MEMORY_MB of memory (default ${DEFAULT_PARSE_MEMORY_MB})`);
    expect(res.body.components.headers["Retry-After"].description).toContain("Sent with RATE_LIMIT_EXCEEDED only");
    const docs = await fetch(`${server.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toContain("text/html");
    const page = await docs.text();
    expect(page).toContain("/api/openapi.json");
    // Only its own inline style and script may run (by hash), and it may only fetch from the server.
    const policy = docs.headers.get("content-security-policy")!;
    const hash = (tag: string) => {
      const body = page.slice(page.indexOf(`<${tag}>`) + tag.length + 2, page.indexOf(`</${tag}>`));
      return `'sha256-${new Bun.CryptoHasher("sha256").update(body).digest("base64")}'`;
    };
    expect(policy).toBe(
      `default-src 'none'; script-src ${hash("script")}; style-src ${hash("style")}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    expect(docs.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("the OpenAPI document states each status's error codes and details, and each response's headers, as they are sent", async () => {
    const { paths, components } = (await server.request("GET", "/openapi.json")).body;
    const errorOf = (operation: any, status: string) => operation.responses[status].content["application/json"].schema.properties.error;
    const headersOf = (operation: any, status: string) => Object.keys(operation.responses[status].headers).sort();
    const search = paths["/api/v1/knowledge-bases/{kb_id}/search"].post;
    const login = paths["/api/auth/login"].post;
    const regenerate = paths["/api/auth/api-key/regenerate"].post;
    expect(errorOf(search, "400").required).toEqual(["code", "message", "details"]);
    expect(errorOf(search, "400").properties.details.required).toEqual(["issues"]);
    expect(errorOf(search, "429").properties.code.enum).toEqual(["RATE_LIMIT_EXCEEDED", "USAGE_LIMIT_EXCEEDED"]);
    expect(errorOf(search, "429").properties.details.anyOf.map((details: any) => details.required)).toEqual([
      ["resource", "limit", "used"],
      ["limit", "current_usage", "plan", "requested"],
    ]);
    expect(errorOf(search, "401").properties.details).toBeUndefined();
    // A replacement refused while the document is processing says where it is (document-service.ts).
    const replace = paths["/api/v1/knowledge-bases/{kb_id}/documents/{doc_id}"].put;
    expect(errorOf(replace, "409").properties.details.properties.status.enum).toEqual(["pending", "parsing", "chunking", "embedding", "ready", "failed"]);
    // /auth and /webhooks are limited per client IP: no allowance there
    expect(errorOf(login, "429").properties.code.enum).toEqual(["RATE_LIMIT_EXCEEDED"]);
    // Only the routes that spend an allowance or count can answer USAGE_LIMIT_EXCEEDED (spec §7, issue 2)
    const kbPath = paths["/api/v1/knowledge-bases/{kb_id}"];
    for (const operation of [kbPath.get, kbPath.patch, kbPath.delete, paths["/api/v1/usage"].get, paths["/api/v1/knowledge-bases"].get]) {
      expect(errorOf(operation, "429").properties.code.enum).toEqual(["RATE_LIMIT_EXCEEDED"]);
      expect(errorOf(operation, "429").properties.details).toBeUndefined();
    }
    for (const operation of [paths["/api/v1/knowledge-bases"].post, paths["/api/v1/knowledge-bases/{kb_id}/documents"].post, paths["/api/v1/knowledge-bases/{kb_id}/documents/text"].post, replace]) {
      expect(errorOf(operation, "429").properties.code.enum).toEqual(["RATE_LIMIT_EXCEEDED", "USAGE_LIMIT_EXCEEDED"]);
    }
    // Signup's 409 is a taken email, with no details; only a replacement's 409 carries a document status
    const signupConflict = errorOf(paths["/api/auth/signup"].post, "409");
    expect([signupConflict.properties.code.enum, signupConflict.properties.details]).toEqual([["CONFLICT"], undefined]);
    // Regeneration takes the dashboard JWT only (an API key there is a 401)
    expect(regenerate.security).toEqual([{ dashboardJwt: [] }]);
    expect(components.securitySchemes.dashboardJwt).toMatchObject({ type: "http", scheme: "bearer", bearerFormat: "JWT" });
    expect(headersOf(regenerate, "401")).toEqual([...["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"], "WWW-Authenticate", "X-Request-Id"]);
    expect(Object.keys(components.headers).sort()).toEqual(["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After", "WWW-Authenticate", "X-Request-Id"]);
    const rate = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];
    expect(headersOf(search, "200")).toEqual([...rate, "X-Request-Id"]);
    expect(headersOf(search, "401")).toEqual(["WWW-Authenticate", "X-Request-Id"]);
    expect(headersOf(search, "429")).toEqual([...rate, "Retry-After", "X-Request-Id"]);
    expect(headersOf(login, "401")).toEqual([...rate, "X-Request-Id"]);
    expect(paths["/api/v1/knowledge-bases"].get.parameters.find((p: any) => p.name === "limit").schema.default).toBe(20);

    // What is sent matches (this server runs without plan limits: /v1 sends no RateLimit headers here, as documented).
    expect(components.headers["RateLimit-Limit"].description).toContain("not sent on /v1 when the server runs with QUARRY_LIMITS=off");
    const sent = (res: { headers: Headers }) => ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "www-authenticate", "x-request-id"].filter((name) => res.headers.has(name));
    const unauthenticated = await server.request("POST", "/v1/knowledge-bases/kb_x/search", { body: { query: "x" } });
    expect([unauthenticated.status, sent(unauthenticated)]).toEqual([401, ["www-authenticate", "x-request-id"]]);
    const failedLogin = await server.request("POST", "/auth/login", { body: { email: "nobody@example.com", password: "not the password" } });
    expect([failedLogin.status, sent(failedLogin)]).toEqual([401, ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "x-request-id"]]);
    // Regeneration reads no body, but a malformed one is refused (documented now)
    const account = await signup(server);
    const malformed = await server.request("POST", "/auth/api-key/regenerate", { token: account.token, body: "{bad" });
    expect(malformed.status).toBe(400);
    expectEnvelope(malformed.body, "VALIDATION_ERROR");
    expect(Object.keys(regenerate.responses)).toContain("400");
  });
});
