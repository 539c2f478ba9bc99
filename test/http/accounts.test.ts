// Signup, login, API keys and JWTs through the real HTTP API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { SignJWT } from "jose";
import { ManualClock, signup, startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

describe("POST /auth/signup", () => {
  test("creates a trial account and returns a JWT, an API key and the account", async () => {
    const res = await server.request("POST", "/auth/signup", {
      body: { email: "Ada@Example.com", password: "correct horse", name: "Ada" },
    });
    expect(res.status).toBe(201);
    const { token, api_key, account } = res.body.data;
    expect(token.split(".")).toHaveLength(3);
    expect(api_key).toMatch(/^qk_[A-Za-z0-9_-]{43}$/);
    expect(account).toMatchObject({ email: "Ada@Example.com", name: "Ada", plan: "trial" });
    expect(account.id).toMatch(/^acc_[0-9a-z]{26}$/);
    const trialDays = (Date.parse(account.trial_ends_at) - Date.parse(account.created_at)) / 86_400_000;
    expect(trialDays).toBe(7);
    const me = await server.request("GET", "/v1/account", { token: api_key });
    expect(me.status).toBe(200);
    expect(me.body.data.id).toBe(account.id);
  });

  test("emails are unique case-insensitively (409 CONFLICT)", async () => {
    await signup(server, "dup@example.com");
    const res = await server.request("POST", "/auth/signup", { body: { email: "DUP@example.COM", password: "password123" } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("CONFLICT");
  });

  test("validates every field and lists each problem", async () => {
    const res = await server.request("POST", "/auth/signup", { body: { email: "not-an-email", password: "short", name: "x".repeat(257) } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
    const paths = res.body.error.details.issues.map((i: { path: string[] }) => i.path.join("."));
    expect(paths.sort()).toEqual(["email", "name", "password"]);
    const long = await server.request("POST", "/auth/signup", { body: { email: "a@b.co", password: "p".repeat(129) } });
    expect(long.status).toBe(400);
    const missing = await server.request("POST", "/auth/signup", { body: {} });
    expect(missing.body.error.details.issues.map((i: { path: string[] }) => i.path[0]).sort()).toEqual(["email", "password"]);
  });

  test("an email's domain labels are as DNS has them: no hyphen at either end, 63 characters at most", async () => {
    // A server of its own: signups share the per-IP /auth burst, which the rest of this file spends.
    const own = await startTestServer();
    try {
      for (const email of ["x1@ex-.com", `x1@${"b".repeat(64)}.com`, "x1@example.xn--abc-"]) {
        const res = await own.request("POST", "/auth/signup", { body: { email, password: "correct horse" } });
        expect([email, res.status, res.body.error.details.issues.map((i: { path: string[] }) => i.path)]).toEqual([email, 400, [["email"]]]);
      }
      for (const email of [`x1@ex-ample.${"b".repeat(63)}.co.uk`, "X2@EXAMPLE.XN--P1AI"]) {
        expect([email, (await own.request("POST", "/auth/signup", { body: { email, password: "correct horse" } })).status]).toEqual([email, 201]);
      }
    } finally {
      await own.stop();
    }
  });

  test("stores only hashes of the password and the API key", async () => {
    const account = await signup(server, "hashes@example.com");
    const db = new Database(join(server.dataDir, "quarry.db"), { readonly: true });
    const row = db.query<{ password_hash: string; api_key_hash: string }, [string]>(
      "SELECT password_hash, api_key_hash FROM accounts WHERE id = ?",
    ).get(account.id)!;
    db.close();
    expect(row.password_hash.startsWith("$argon2id$")).toBe(true);
    expect(row.api_key_hash).not.toContain(account.apiKey);
    expect(row.api_key_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("POST /auth/login", () => {
  test("returns a working JWT for the right password", async () => {
    const account = await signup(server, "login@example.com");
    const res = await server.request("POST", "/auth/login", { body: { email: "LOGIN@example.com", password: "correct horse battery" } });
    expect(res.status).toBe(200);
    expect(res.body.data.account.id).toBe(account.id);
    const me = await server.request("GET", "/v1/account", { token: res.body.data.token });
    expect(me.status).toBe(200);
  });

  test("gives the same 401 for a wrong password and an unknown email", async () => {
    await signup(server, "login2@example.com");
    const wrong = await server.request("POST", "/auth/login", { body: { email: "login2@example.com", password: "nope-nope" } });
    const unknown = await server.request("POST", "/auth/login", { body: { email: "nobody@example.com", password: "nope-nope" } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.error.code).toBe("AUTHENTICATION_ERROR");
  });
});

describe("authentication on /v1", () => {
  test("accepts the API key and the JWT", async () => {
    const account = await signup(server);
    for (const token of [account.apiKey, account.token]) {
      const res = await server.request("GET", "/v1/knowledge-bases", { token });
      expect(res.status).toBe(200);
    }
  });

  test("rejects missing, malformed and unknown credentials with 401", async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: "Bearer" },
      { authorization: "Basic dXNlcjpwYXNz" },
      { authorization: "Bearer qk_not-a-real-key" },
      { authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhY2NfeCJ9.bad" },
    ];
    for (const headers of cases) {
      const res = await server.request("GET", "/v1/knowledge-bases", { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: "AUTHENTICATION_ERROR", message: "Invalid or missing API key" } });
    }
  });
});

describe("POST /auth/api-key/regenerate", () => {
  test("needs the JWT, returns a new key once and revokes the old key at once", async () => {
    const account = await signup(server);
    const refused = { error: { code: "AUTHENTICATION_ERROR", message: "Invalid or missing API key" } };
    const withKey = await server.request("POST", "/auth/api-key/regenerate", { token: account.apiKey });
    expect(withKey.status).toBe(401);
    expect(withKey.body).toEqual({
      error: {
        code: "AUTHENTICATION_ERROR",
        message: "Regenerating the API key takes the dashboard token from signup or POST /auth/login (Authorization: Bearer <token>), not the API key",
      },
    });
    const noAuth = await server.request("POST", "/auth/api-key/regenerate");
    expect(noAuth.status).toBe(401);
    expect(noAuth.body).toEqual(refused);
    expect(noAuth.headers.get("www-authenticate")).toBe('Bearer realm="quarry"');
    // the credential is checked before the body, as on /v1
    const noAuthTextBody = await server.request("POST", "/auth/api-key/regenerate", { body: "hello", headers: { "content-type": "text/plain" } });
    expect(noAuthTextBody.status).toBe(401);
    expect(noAuthTextBody.body).toEqual(refused);
    const jwtTextBody = await server.request("POST", "/auth/api-key/regenerate", { token: account.token, body: "hello", headers: { "content-type": "text/plain" } });
    expect(jwtTextBody.status).toBe(400);
    expect(jwtTextBody.body.error.code).toBe("VALIDATION_ERROR");
    expect((await server.request("GET", "/v1/account")).headers.get("www-authenticate")).toBe('Bearer realm="quarry"');
    expect((await server.request("GET", "/v1/account", { token: account.apiKey })).status).toBe(200); // still valid

    const res = await server.request("POST", "/auth/api-key/regenerate", { token: account.token });
    expect(res.status).toBe(200);
    expect(res.body.data.api_key).toMatch(/^qk_/);
    expect(res.body.data.api_key).not.toBe(account.apiKey);
    expect(typeof res.body.data.message).toBe("string");
    expect((await server.request("GET", "/v1/account", { token: account.apiKey })).status).toBe(401);
    expect((await server.request("GET", "/v1/account", { token: res.body.data.api_key })).status).toBe(200);
  });
});

describe("dashboard JWT", () => {
  test("is HS256 with the account id as subject and works for 24 hours", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const timed = await startTestServer({ clock });
    try {
      const account = await signup(timed);
      const [header, payload] = account.token.split(".").slice(0, 2).map((part) => JSON.parse(Buffer.from(part, "base64url").toString()));
      expect(header.alg).toBe("HS256");
      expect(payload.sub).toBe(account.id);
      expect(payload.exp - payload.iat).toBe(24 * 60 * 60);
      clock.advance(24 * 60 * 60 * 1000 - 1000);
      expect((await timed.request("GET", "/v1/account", { token: account.token })).status).toBe(200);
      clock.advance(2000);
      const expired = await timed.request("GET", "/v1/account", { token: account.token });
      expect(expired.status).toBe(401);
      expect(expired.body).toEqual({ error: { code: "AUTHENTICATION_ERROR", message: "Invalid or missing API key" } });
      expect((await timed.request("POST", "/auth/api-key/regenerate", { token: account.token })).status).toBe(401);
      expect((await timed.request("GET", "/v1/account", { token: account.apiKey })).status).toBe(200); // the API key does not expire
    } finally {
      await timed.stop();
    }
  });

  test("a token signed with the server's secret but without exp or iat, or meant to last past 24 hours, is refused", async () => {
    const secret = "s".repeat(48);
    const keyed = await startTestServer({ env: { QUARRY_JWT_SECRET: secret } });
    try {
      const account = await signup(keyed);
      const key = new TextEncoder().encode(secret);
      const now = Math.floor(Date.now() / 1000);
      const sign = (claims: { iat?: number; exp?: number }) =>
        new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setSubject(account.id).sign(key);
      expect((await keyed.request("GET", "/v1/account", { token: await sign({ iat: now, exp: now + 3600 }) })).status).toBe(200);
      for (const claims of [{}, { iat: now }, { exp: now + 3600 }, { iat: now, exp: now + 30 * 24 * 3600 }, { iat: now - 25 * 3600, exp: now + 3600 }]) {
        const res = await keyed.request("GET", "/v1/account", { token: await sign(claims) });
        expect({ claims, status: res.status }).toEqual({ claims, status: 401 });
      }
    } finally {
      await keyed.stop();
    }
  });
});
