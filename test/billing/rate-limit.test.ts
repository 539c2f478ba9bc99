// Per-account rate limiting (token bucket, capacity = refill = the plan's requests per second) through the
// real HTTP API. The limiter's clock is frozen and moved by hand, so bursts are counted exactly.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signup, startTestServer, type ApiResponse, type TestAccount, type TestServer } from "../helpers/server.ts";
import { deliverWebhook, newWebhookSecret, subscriptionEvent } from "./webhook-client.ts";

const secret = newWebhookSecret();
let server: TestServer;
let nowMs = 0;
beforeAll(async () => {
  server = await startTestServer({ rateLimitClock: () => nowMs, env: { QUARRY_WEBHOOK_SECRET: secret } });
});
afterAll(() => server.stop());

const get = (account: TestAccount, path = "/v1/knowledge-bases", token = account.apiKey) => server.request("GET", path, { token });

function burst(n: number, send: () => Promise<ApiResponse>): Promise<ApiResponse[]> {
  return Promise.all(Array.from({ length: n }, send));
}

const statuses = (responses: ApiResponse[]) => responses.map((r) => r.status).sort();

describe("rate limit", () => {
  test("a burst of 8 on a trial account (5/s): exactly 5 pass, 3 are 429 RATE_LIMIT_EXCEEDED with Retry-After", async () => {
    const account = await signup(server);
    const responses = await burst(8, () => get(account));
    expect(statuses(responses)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    for (const refused of responses.filter((r) => r.status === 429)) {
      expect(refused.body).toEqual({ error: { code: "RATE_LIMIT_EXCEEDED", message: "Rate limit exceeded" } });
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(refused.headers.get("ratelimit-limit")).toBe("5");
      expect(refused.headers.get("ratelimit-remaining")).toBe("0");
      expect(refused.headers.get("ratelimit-reset")).toBe("1");
      expect(refused.headers.get("x-request-id")).toMatch(/^req_/);
    }
  });

  test("successful responses carry RateLimit-Limit, -Remaining and -Reset", async () => {
    const account = await signup(server);
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await get(account);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-limit")).toBe("5");
      expect(res.headers.get("ratelimit-reset")).toBe("1");
      remaining.push(res.headers.get("ratelimit-remaining"));
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    expect((await get(account)).status).toBe(429);
  });

  test("tokens refill continuously at the plan's rate, up to the bucket's capacity", async () => {
    const account = await signup(server);
    await burst(5, () => get(account));
    expect((await get(account)).status).toBe(429);
    nowMs += 199;
    expect((await get(account)).status).toBe(429);
    nowMs += 1; // 200 ms = one token at 5/s
    expect((await get(account)).status).toBe(200);
    expect((await get(account)).status).toBe(429);
    nowMs += 60_000; // a long pause refills only up to the capacity
    expect(statuses(await burst(7, () => get(account)))).toEqual([200, 200, 200, 200, 200, 429, 429]);
  });

  test("the API key and the JWT share the account's bucket; other accounts have their own", async () => {
    const account = await signup(server);
    const other = await signup(server);
    const mixed = await Promise.all([
      ...Array.from({ length: 3 }, () => get(account)),
      ...Array.from({ length: 3 }, () => get(account, "/v1/account", account.token)),
    ]);
    expect(statuses(mixed)).toEqual([200, 200, 200, 200, 200, 429]);
    expect((await get(other)).status).toBe(200);
  });

  test("every /v1 request counts, whatever its outcome (404, 400), and refused requests take no token", async () => {
    const account = await signup(server);
    expect((await get(account, "/v1/knowledge-bases/kb_0000000000")).status).toBe(404);
    const invalid = await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "" } });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("ratelimit-remaining")).toBe("3");
    expect((await get(account, "/v1/usage")).status).toBe(200);
    expect((await get(account, "/v1/requests")).status).toBe(200);
    expect((await get(account)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await get(account)).status).toBe(429);
    nowMs += 200;
    expect((await get(account)).status).toBe(200);
  });

  test("a plan change applies to the bucket at once: the new capacity, minus the requests already spent", async () => {
    const account = await signup(server);
    await burst(2, () => get(account));
    const upgrade = subscriptionEvent("subscription.active", account.id, { product_id: "prod_starter" });
    expect((await deliverWebhook(server, secret, upgrade)).status).toBe(200);
    const first = await get(account);
    expect(first.headers.get("ratelimit-limit")).toBe("10");
    expect(first.headers.get("ratelimit-remaining")).toBe("7");
    expect(statuses(await burst(9, () => get(account)))).toEqual([...Array(7).fill(200), 429, 429]);
    nowMs += 1000;
    expect(statuses(await burst(12, () => get(account)))).toEqual([...Array(10).fill(200), 429, 429]);
    nowMs += 1000;
    await burst(3, () => get(account));
    const cancel = subscriptionEvent("subscription.canceled", account.id);
    expect((await deliverWebhook(server, secret, cancel)).status).toBe(200); // back to 5/s: 10 - 3 spent - 5 = 2 left
    const after = await get(account);
    expect(after.headers.get("ratelimit-limit")).toBe("5");
    expect(after.headers.get("ratelimit-remaining")).toBe("1");
    expect(statuses(await burst(3, () => get(account)))).toEqual([200, 429, 429]);
  });

  test("requests without a valid credential are not rate limited (401 each time)", async () => {
    const responses = await burst(8, () => server.request("GET", "/v1/knowledge-bases", { token: "qk_wrong" }));
    expect(statuses(responses)).toEqual(Array(8).fill(401));
    expect(responses[0].headers.get("ratelimit-limit")).toBeNull();
  });
});

describe("failed logins per email address", () => {
  const login = (email: string, password: string) => server.request("POST", "/auth/login", { body: { email, password } });
  const statusesOf = async (n: number, send: () => Promise<ApiResponse>) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await send()).status);
    return out;
  };

  test("10 failures, then 429 whatever the password until a minute passes; unknown emails alike, other emails unaffected", async () => {
    nowMs += 60_000; // a full per-IP bucket (20) for /auth
    const account = await signup(server);
    expect(await statusesOf(10, () => login(account.email, "wrong password"))).toEqual(Array(10).fill(401));
    const refused = await login(account.email, "correct horse battery");
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(refused.headers.get("retry-after")).toBe("60");
    // Counted per address, whatever its case.
    expect((await login(account.email.toUpperCase(), "wrong password")).status).toBe(429);

    nowMs += 2_000; // the per-IP bucket refills; the address's does not (one a minute)
    const unknown = `nobody${Date.now()}@example.com`;
    expect(await statusesOf(11, () => login(unknown, "wrong password"))).toEqual([...Array(10).fill(401), 429]);
    const other = await signup(server);
    expect((await login(other.email, "correct horse battery")).status).toBe(200);

    nowMs += 60_000; // one more try for the address
    expect((await login(account.email, "correct horse battery")).status).toBe(200);
    // Success takes nothing: the bucket is not spent below where it was.
    expect((await login(account.email, "correct horse battery")).status).toBe(200);
  });
});

describe("QUARRY_LIMITS=off", () => {
  test("turns the rate limit off: no 429 and no RateLimit headers", async () => {
    const unlimited = await startTestServer({ env: { QUARRY_LIMITS: "off" }, rateLimitClock: () => 0 });
    try {
      const account = await signup(unlimited);
      const responses = await burst(20, () => unlimited.request("GET", "/v1/knowledge-bases", { token: account.apiKey }));
      expect(statuses(responses)).toEqual(Array(20).fill(200));
      expect(responses[0].headers.get("ratelimit-limit")).toBeNull();
    } finally {
      await unlimited.stop();
    }
  });
});
