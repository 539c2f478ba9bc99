// Knowledge base CRUD, pagination, plan limit and cross-account isolation through the real HTTP API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signup, startTestServer, type TestAccount, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
});
afterAll(() => server.stop());

const create = (account: TestAccount, body: unknown) => server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body });

describe("knowledge bases", () => {
  test("create returns 201 with every field", async () => {
    const account = await signup(server);
    const res = await create(account, { name: "Support", description: "FAQ articles", metadata: { team: "cx", tier: 2 } });
    expect(res.status).toBe(201);
    const kb = res.body.data;
    expect(kb).toMatchObject({
      account_id: account.id,
      name: "Support",
      description: "FAQ articles",
      metadata: { team: "cx", tier: 2 },
      document_count: 0,
    });
    expect(kb.id).toMatch(/^kb_[0-9a-z]{26}$/);
    expect(new Date(kb.created_at).toISOString()).toBe(kb.created_at);
    expect(kb.updated_at).toBe(kb.created_at);
    const got = await server.request("GET", `/v1/knowledge-bases/${kb.id}`, { token: account.apiKey });
    expect(got.body.data).toEqual(kb);
  });

  test("defaults: description null, metadata {}", async () => {
    const account = await signup(server);
    const res = await create(account, { name: "x" });
    expect(res.body.data.description).toBeNull();
    expect(res.body.data.metadata).toEqual({});
  });

  test("validates name, description and metadata", async () => {
    const account = await signup(server);
    for (const body of [{}, { name: "" }, { name: "n".repeat(257) }, { name: "a", description: "d".repeat(1025) }, { name: "a", metadata: [1] }, { name: 5 }]) {
      const res = await create(account, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
      expect(res.body.error.details.issues.length).toBeGreaterThan(0);
    }
    expect((await create(account, { name: "n".repeat(256), description: "d".repeat(1024) })).status).toBe(201);
  });

  test("PATCH updates fields and replaces metadata", async () => {
    const account = await signup(server);
    const kb = (await create(account, { name: "a", metadata: { keep: false, x: 1 } })).body.data;
    await Bun.sleep(5);
    const res = await server.request("PATCH", `/v1/knowledge-bases/${kb.id}`, { token: account.apiKey, body: { name: "b", metadata: { y: 2 } } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: kb.id, name: "b", metadata: { y: 2 }, description: null });
    expect(res.body.data.updated_at > kb.updated_at).toBe(true);
    const desc = await server.request("PATCH", `/v1/knowledge-bases/${kb.id}`, { token: account.apiKey, body: { description: "now" } });
    expect(desc.body.data).toMatchObject({ name: "b", description: "now", metadata: { y: 2 } });
    // a patch that sets nothing changes nothing, not even updated_at
    await Bun.sleep(5);
    const empty = await server.request("PATCH", `/v1/knowledge-bases/${kb.id}`, { token: account.apiKey, body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body.data).toEqual(desc.body.data);
  });

  test("DELETE removes it", async () => {
    const account = await signup(server);
    const kb = (await create(account, { name: "gone" })).body.data;
    const res = await server.request("DELETE", `/v1/knowledge-bases/${kb.id}`, { token: account.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { deleted: true } });
    const again = await server.request("GET", `/v1/knowledge-bases/${kb.id}`, { token: account.apiKey });
    expect(again.status).toBe(404);
    expect(again.body.error).toEqual({ code: "NOT_FOUND", message: `Knowledge base not found: ${kb.id}` });
  });

  test("list paginates newest first with an opaque cursor, default 20, max 100", async () => {
    const account = await signup(server);
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await create(account, { name: `kb ${i}` })).body.data.id);
    const first = await server.request("GET", "/v1/knowledge-bases", { token: account.apiKey });
    expect(first.body.data).toHaveLength(20);
    expect(first.body.meta.has_more).toBe(true);
    expect(first.body.data.map((k: { id: string }) => k.id)).toEqual(ids.slice().reverse().slice(0, 20));
    // a new knowledge base created between pages does not shift the next page
    await create(account, { name: "late" });
    const second = await server.request("GET", `/v1/knowledge-bases?cursor=${first.body.meta.cursor}`, { token: account.apiKey });
    expect(second.body.data.map((k: { id: string }) => k.id)).toEqual(ids.slice(0, 5).reverse());
    expect(second.body.meta).toEqual({ cursor: null, has_more: false });

    const small = await server.request("GET", "/v1/knowledge-bases?limit=2", { token: account.apiKey });
    expect(small.body.data).toHaveLength(2);
    // limit is written in decimal digits: not as 1e1, 0x10, with a space, empty, or twice
    const badLimits = ["limit=0", "limit=101", "limit=abc", "limit=1e1", "limit=0x10", "limit=%205", "limit=", "limit=1.5", "limit=1&limit=2"];
    for (const bad of [...badLimits, "cursor=%%%", "cursor=bm90LWpzb24"]) {
      const res = await server.request("GET", `/v1/knowledge-bases?${bad}`, { token: account.apiKey });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
      // query parameters are named the same way whichever check refused them
      expect(res.body.error.details.issues[0].path).toEqual(["query", bad.split("=")[0]]);
      if (badLimits.includes(bad)) expect(res.body.error.details.issues[0].message).toBe("must be a whole number from 1 to 100");
    }
    expect((await server.request("GET", "/v1/knowledge-bases?limit=100", { token: account.apiKey })).status).toBe(200);
    // a cursor with anything appended (base64 decoding would skip it) or with a character changed is refused
    for (const bad of [`${small.body.meta.cursor}x`, `${small.body.meta.cursor}!!`, `${small.body.meta.cursor}%20`, `${small.body.meta.cursor}=`]) {
      const res = await server.request("GET", `/v1/knowledge-bases?limit=2&cursor=${bad}`, { token: account.apiKey });
      expect(res.status).toBe(400);
      expect(res.body.error.details.issues[0]).toEqual({ path: ["query", "cursor"], message: "is not a valid cursor" });
    }
    expect((await server.request("GET", `/v1/knowledge-bases?limit=2&cursor=${small.body.meta.cursor}`, { token: account.apiKey })).status).toBe(200);
    // an empty cursor is the first page
    const emptyCursor = await server.request("GET", "/v1/knowledge-bases?limit=2&cursor=", { token: account.apiKey });
    expect(emptyCursor.body).toEqual(small.body);
  });

  test("a path id without the kb_ prefix is a 400", async () => {
    const account = await signup(server);
    for (const method of ["GET", "PATCH", "DELETE"]) {
      const res = await server.request(method, "/v1/knowledge-bases/12345", { token: account.apiKey, body: method === "PATCH" ? {} : undefined });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
    }
  });

  test("any id with the kb_ prefix that does not exist is a 404, whatever follows the prefix", async () => {
    const account = await signup(server);
    for (const id of ["kb_nonexistent", "kb_DOES-NOT-EXIST", `kb_${crypto.randomUUID()}`, "kb_0000000000000000000000000a"]) {
      for (const method of ["GET", "PATCH", "DELETE"]) {
        const res = await server.request(method, `/v1/knowledge-bases/${id}`, { token: account.apiKey, body: method === "PATCH" ? { name: "x" } : undefined });
        expect(res.status).toBe(404);
        expect(res.body.error).toEqual({ code: "NOT_FOUND", message: `Knowledge base not found: ${id}` });
      }
    }
  });

  test("another account's knowledge base is a 404 for every endpoint", async () => {
    const owner = await signup(server);
    const other = await signup(server);
    const kb = (await create(owner, { name: "private" })).body.data;
    const calls: [string, unknown][] = [["GET", undefined], ["PATCH", { name: "hijack" }], ["DELETE", undefined]];
    for (const [method, body] of calls) {
      const res = await server.request(method, `/v1/knowledge-bases/${kb.id}`, { token: other.apiKey, body });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe(`Knowledge base not found: ${kb.id}`);
    }
    const list = await server.request("GET", "/v1/knowledge-bases", { token: other.apiKey });
    expect(list.body.data).toEqual([]);
    expect((await server.request("GET", `/v1/knowledge-bases/${kb.id}`, { token: owner.apiKey })).body.data.name).toBe("private");
  });
});

describe("plan limit on knowledge bases", () => {
  test("a trial account may create 2; the third is 429 USAGE_LIMIT_EXCEEDED", async () => {
    const limited = await startTestServer();
    try {
      const account = await signup(limited);
      for (let i = 0; i < 2; i++) {
        expect((await limited.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: `k${i}` } })).status).toBe(201);
      }
      const res = await limited.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "k3" } });
      expect(res.status).toBe(429);
      expect(res.body.error.code).toBe("USAGE_LIMIT_EXCEEDED");
      expect(res.body.error.details).toEqual({ resource: "knowledge_bases", limit: 2, used: 2 });
    } finally {
      await limited.stop();
    }
  });
});
