// GET /v1/usage through the real HTTP API: the record's shape, page metering, and monthly billing periods
// anchored at signup (the clock is moved across their boundaries).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock, signup, startTestServer, waitForDocument, type TestAccount, type TestServer } from "../helpers/server.ts";
import { deliverWebhook, newWebhookSecret, subscriptionEvent } from "./webhook-client.ts";

const clock = new ManualClock(new Date("2026-01-31T10:00:00.000Z"));
const secret = newWebhookSecret();
let server: TestServer;
beforeAll(async () => {
  // limits off: the periods below run past the 7-day trial, and usage is metered either way
  server = await startTestServer({ clock, env: { QUARRY_LIMITS: "off", QUARRY_WEBHOOK_SECRET: secret } });
});
afterAll(() => server.stop());

const usage = async (account: TestAccount) => {
  const res = await server.request("GET", "/v1/usage", { token: account.apiKey });
  expect(res.status).toBe(200);
  return res.body.data;
};

async function ingest(account: TestAccount, kbId: string, send: () => Promise<{ status: number; body: any }>) {
  const res = await send();
  expect(res.status).toBe(202);
  expect((await waitForDocument(server, account.apiKey, kbId, res.body.data.id)).status).toBe("ready");
}

describe("GET /v1/usage", () => {
  let account: TestAccount;
  let kbId: string;
  beforeAll(async () => {
    clock.set(new Date("2026-01-31T10:00:00.000Z"));
    account = await signup(server);
    kbId = (await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "kb" } })).body.data.id;
  });

  test("a new account: the period starts at signup, the trial's allowances, nothing used", async () => {
    expect(await usage(account)).toEqual({
      current_period_start: "2026-01-31T10:00:00.000Z",
      current_period_end: "2026-02-28T10:00:00.000Z",
      plan: "trial",
      limits: { pages_processed: 100, search_queries: 500 },
      usage: { pages_processed: 0, search_queries: 0 },
      percentage_consumed: { pages: 0, queries: 0 },
    });
  });

  test("text counts one page per 2,400 bytes, rounded up, once processed", async () => {
    await ingest(account, kbId, () => server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, { token: account.apiKey, body: { text: "a".repeat(5000) } }));
    await ingest(account, kbId, () =>
      server.request("POST", `/v1/knowledge-bases/${kbId}/documents`, { token: account.apiKey, form: { file: new File(["b".repeat(2400)], "exact.txt") } }),
    );
    const record = await usage(account);
    expect(record.usage).toEqual({ pages_processed: 4, search_queries: 0 });
    expect(record.percentage_consumed).toEqual({ pages: 4, queries: 0 });
  });

  test("usage resets when the next period starts; periods keep the anchor's day, clamped to short months", async () => {
    clock.set(new Date("2026-02-28T09:59:59.999Z"));
    expect((await usage(account)).usage.pages_processed).toBe(4);
    clock.set(new Date("2026-02-28T10:00:00.000Z"));
    const february = await usage(account);
    expect(february).toMatchObject({
      current_period_start: "2026-02-28T10:00:00.000Z",
      current_period_end: "2026-03-31T10:00:00.000Z",
      usage: { pages_processed: 0, search_queries: 0 },
      percentage_consumed: { pages: 0, queries: 0 },
    });
    await ingest(account, kbId, () => server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, { token: account.apiKey, body: { text: "c".repeat(2401) } }));
    expect((await usage(account)).usage.pages_processed).toBe(2);
    clock.set(new Date("2026-04-15T00:00:00.000Z"));
    expect(await usage(account)).toMatchObject({
      current_period_start: "2026-03-31T10:00:00.000Z",
      current_period_end: "2026-04-30T10:00:00.000Z",
      usage: { pages_processed: 0 },
    });
  });

  test("percentages are whole numbers rounded down", async () => {
    clock.set(new Date("2026-06-01T00:00:00.000Z"));
    const other = await signup(server);
    const kb = (await server.request("POST", "/v1/knowledge-bases", { token: other.apiKey, body: { name: "kb" } })).body.data.id;
    // 2 pages of the starter plan's 500 would be 0.4 %
    await deliverWebhook(server, secret, subscriptionEvent("subscription.active", other.id, { product_id: "prod_starter" }));
    await ingest(other, kb, () => server.request("POST", `/v1/knowledge-bases/${kb}/documents/text`, { token: other.apiKey, body: { text: "d".repeat(4000) } }));
    const record = await usage(other);
    expect(record).toMatchObject({ plan: "starter", limits: { pages_processed: 500, search_queries: 5000 }, usage: { pages_processed: 2 } });
    expect(record.percentage_consumed.pages).toBe(0);
  });
});
