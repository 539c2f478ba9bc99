// Search queries against the plan allowance through the real HTTP API: each call counts one, concurrent
// calls are all counted, the 501st of a trial period is refused, and an ended trial refuses searching.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock, signup, startTestServer, waitForDocument, type TestAccount, type TestServer } from "../helpers/server.ts";

const DAY_MS = 24 * 3600_000;
const clock = new ManualClock(new Date("2026-07-01T08:00:00.000Z"));
let server: TestServer;
beforeAll(async () => {
  // The limiter's clock moves a second per request: these tests are about the allowance, not the rate.
  let rateClockMs = 0;
  server = await startTestServer({ clock, rateLimitClock: () => (rateClockMs += 1000) });
});
afterAll(() => server.stop());

async function accountWithDocument() {
  const account = await signup(server);
  const kbId = (await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "kb" } })).body.data.id;
  const doc = await server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, {
    token: account.apiKey,
    body: { text: "Refunds are issued within 14 days of a return." },
  });
  expect((await waitForDocument(server, account.apiKey, kbId, doc.body.data.id)).status).toBe("ready");
  return { account, kbId: kbId as string };
}

const search = (account: TestAccount, kbId: string) =>
  server.request("POST", `/v1/knowledge-bases/${kbId}/search`, { token: account.apiKey, body: { query: "refund", mode: "keyword", rerank: false } });

const queriesUsed = async (account: TestAccount) =>
  (await server.request("GET", "/v1/usage", { token: account.apiKey })).body.data;

describe("search queries", () => {
  test("each search counts one, concurrent searches included; percentages round down", async () => {
    const { account, kbId } = await accountWithDocument();
    const responses = await Promise.all(Array.from({ length: 20 }, () => search(account, kbId)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const record = await queriesUsed(account);
    expect(record.usage.search_queries).toBe(20);
    expect(record.percentage_consumed.queries).toBe(4);
    await Promise.all(Array.from({ length: 4 }, () => search(account, kbId)));
    expect((await queriesUsed(account)).percentage_consumed.queries).toBe(4); // 24 of 500 = 4.8 %
  });

  test("the 501st search of a trial period is 429 with {limit, current_usage, plan, requested}", async () => {
    const { account, kbId } = await accountWithDocument();
    for (let batch = 0; batch < 20; batch++) {
      const statuses = (await Promise.all(Array.from({ length: 25 }, () => search(account, kbId)))).map((r) => r.status);
      expect(statuses).toEqual(Array(25).fill(200));
    }
    const refused = await search(account, kbId);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toEqual({
      code: "USAGE_LIMIT_EXCEEDED",
      message: expect.stringMatching(/search query allowance used up.*upgrade.*next billing period/i),
      details: { limit: 500, current_usage: 500, plan: "trial", requested: 1 },
    });
    const record = await queriesUsed(account);
    expect(record.usage.search_queries).toBe(500);
    expect(record.percentage_consumed.queries).toBe(100);
  });

  test("after the 7-day trial, searching is refused", async () => {
    const { account, kbId } = await accountWithDocument();
    expect((await search(account, kbId)).status).toBe(200);
    clock.advance(8 * DAY_MS);
    const refused = await search(account, kbId);
    expect(refused.status).toBe(429);
    expect(refused.body.error.details).toEqual({ resource: "trial", limit: 7, used: 8 });
    expect((await queriesUsed(account)).usage.search_queries).toBe(1);
  });
});
