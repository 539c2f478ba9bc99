// Every plan limit's 429 USAGE_LIMIT_EXCEEDED through the real HTTP API (trial plan: 2 knowledge bases,
// 10 documents, 50 MB, 100 pages, 7 days), and QUARRY_LIMITS=off.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { ManualClock, signup, startTestServer, waitForDocument, type TestAccount, type TestServer } from "../helpers/server.ts";
import { deliverWebhook, newWebhookSecret, subscriptionEvent } from "./webhook-client.ts";

const DAY_MS = 24 * 3600_000;
const MB = 1024 * 1024;
const clock = new ManualClock(new Date("2026-05-01T09:00:00.000Z"));
const secret = newWebhookSecret();
let server: TestServer;
beforeAll(async () => {
  // The limiter's clock moves a second per request: these tests are about allowances, not the rate.
  let rateClockMs = 0;
  server = await startTestServer({ clock, rateLimitClock: () => (rateClockMs += 1000), env: { QUARRY_WEBHOOK_SECRET: secret } });
});
afterAll(() => server.stop());

const api = (account: TestAccount) => ({
  createKb: (name = "kb") => server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name } }),
  addText: (kbId: string, text: string) => server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, { token: account.apiKey, body: { text } }),
  upload: (kbId: string, file: File) => server.request("POST", `/v1/knowledge-bases/${kbId}/documents`, { token: account.apiKey, form: { file } }),
  replace: (kbId: string, docId: string, file: File) =>
    server.request("PUT", `/v1/knowledge-bases/${kbId}/documents/${docId}`, { token: account.apiKey, form: { file } }),
  get: (path: string) => server.request("GET", path, { token: account.apiKey }),
});

async function accountWithKb() {
  const account = await signup(server);
  const calls = api(account);
  const kb = (await calls.createKb()).body.data;
  return { account, calls, kbId: kb.id as string };
}

const TOPICS = ["apples", "rivers", "copper", "violins", "glaciers", "lanterns", "orchids", "harbors", "meteors", "saddles"];
const THEMES = ["tariffs", "mosaics", "engines", "ferns", "ballads", "comets", "quarries", "pillows", "tunnels", "wagons", "bridges"];

/** A PDF of n pages (n ≤ 110) with one short, different line each: n metered pages, little text to embed. */
async function pdfWithPages(n: number): Promise<File> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < n; i++) {
    pdf.addPage([400, 200]).drawText(`Notes on ${TOPICS[i % 10]} and ${THEMES[Math.floor(i / 10)]}.`, { x: 20, y: 100, size: 12, font });
  }
  return new File([new Uint8Array(await pdf.save())], `pages-${n}.pdf`, { type: "application/pdf" });
}

function expectUsageLimit(res: { status: number; body: any }, details: Record<string, unknown>, message: RegExp) {
  expect(res.status).toBe(429);
  expect(res.body.error.code).toBe("USAGE_LIMIT_EXCEEDED");
  expect(res.body.error.details).toEqual(details);
  expect(res.body.error.message).toMatch(message);
}

describe("plan limits (trial)", () => {
  test("knowledge bases: the third is refused", async () => {
    const { calls } = await accountWithKb();
    expect((await calls.createKb("second")).status).toBe(201);
    expectUsageLimit(await calls.createKb("third"), { resource: "knowledge_bases", limit: 2, used: 2 }, /upgrade/i);
  });

  test("documents: the eleventh is refused (text, upload), until one is deleted", async () => {
    const { account, calls, kbId } = await accountWithKb();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await calls.addText(kbId, `document number ${i}`);
      expect(res.status).toBe(202);
      ids.push(res.body.data.id);
    }
    const details = { resource: "documents", limit: 10, used: 10 };
    expectUsageLimit(await calls.addText(kbId, "one too many"), details, /10 documents.*upgrade/i);
    expectUsageLimit(await calls.upload(kbId, new File(["one too many"], "extra.txt")), details, /upgrade/i);
    expect((await server.request("DELETE", `/v1/knowledge-bases/${kbId}/documents/${ids[0]}`, { token: account.apiKey })).status).toBe(200);
    expect((await calls.addText(kbId, "room again")).status).toBe(202);
  });

  test("storage: a file that would pass 50 MB is refused, with bytes used and allowed", async () => {
    const { calls, kbId } = await accountWithKb();
    const bytes = 30 * MB;
    expect((await calls.upload(kbId, new File([new Uint8Array(bytes)], "big.pdf"))).status).toBe(202);
    expectUsageLimit(await calls.upload(kbId, new File([new Uint8Array(bytes)], "bigger.pdf")), { resource: "storage", limit: 50 * MB, used: bytes }, /storage/i);
  });

  test("pages: a document that would pass the 100 pages fails and counts nothing; once they are used, ingestion is refused", async () => {
    const { account, calls, kbId } = await accountWithKb();
    const tooBig = (await calls.upload(kbId, await pdfWithPages(101))).body.data;
    const failed = await waitForDocument(server, account.apiKey, kbId, tooBig.id);
    expect(failed.status).toBe("failed");
    expect(failed.error_detail).toMatch(/allowance of 100 pages/);
    expect((await calls.get("/v1/usage")).body.data.usage.pages_processed).toBe(0);

    const exact = (await calls.upload(kbId, await pdfWithPages(100))).body.data;
    expect((await waitForDocument(server, account.apiKey, kbId, exact.id)).status).toBe("ready");
    const usage = (await calls.get("/v1/usage")).body.data;
    expect(usage.usage.pages_processed).toBe(100);
    expect(usage.percentage_consumed.pages).toBe(100);
    const details = { resource: "pages", limit: 100, used: 100 };
    expectUsageLimit(await calls.addText(kbId, "one more page"), details, /page allowance used up.*upgrade.*next billing period/i);
    expectUsageLimit(await calls.upload(kbId, new File(["x"], "x.txt")), details, /page/);
  });

  test("the trial ends after 7 days: uploads, text, replacements refused; reads keep working", async () => {
    const { calls, kbId, account } = await accountWithKb();
    const doc = (await calls.addText(kbId, "before the end")).body.data;
    await waitForDocument(server, account.apiKey, kbId, doc.id);
    clock.advance(7 * DAY_MS - 1);
    expect((await calls.addText(kbId, "last minute")).status).toBe(202);
    clock.advance(1);
    const details = { resource: "trial", limit: 7, used: 7 };
    expectUsageLimit(await calls.addText(kbId, "too late"), details, /7-day trial has ended.*upgrade/i);
    expectUsageLimit(await calls.upload(kbId, new File(["too late"], "late.txt")), details, /trial/);
    expectUsageLimit(await calls.replace(kbId, doc.id, new File(["too late"], "late.txt")), details, /trial/);
    clock.advance(3 * DAY_MS);
    expectUsageLimit(await calls.addText(kbId, "even later"), { resource: "trial", limit: 7, used: 10 }, /trial/);
    for (const path of [`/v1/knowledge-bases/${kbId}`, `/v1/knowledge-bases/${kbId}/documents`, `/v1/knowledge-bases/${kbId}/documents/${doc.id}`, "/v1/usage", "/v1/requests"]) {
      expect((await calls.get(path)).status).toBe(200);
    }
  });
});

describe("plan changes", () => {
  test("a subscription lifts the limits at once", async () => {
    const { account, calls } = await accountWithKb();
    expect((await calls.createKb("second")).status).toBe(201);
    expect((await calls.createKb("third")).status).toBe(429);
    expect((await deliverWebhook(server, secret, subscriptionEvent("subscription.active", account.id, { product_id: "prod_starter" }))).status).toBe(200);
    expect((await calls.createKb("third")).status).toBe(201);
    expectUsageLimit(await calls.createKb("fourth"), { resource: "knowledge_bases", limit: 3, used: 3 }, /3/);
  });

  test("when the subscription ends, ingestion is refused as for an ended trial, and reads keep working", async () => {
    const { account, calls, kbId } = await accountWithKb();
    await deliverWebhook(server, secret, subscriptionEvent("subscription.active", account.id));
    clock.advance(2 * DAY_MS);
    expect((await calls.addText(kbId, "while subscribed")).status).toBe(202);
    await deliverWebhook(server, secret, subscriptionEvent("subscription.canceled", account.id));
    expectUsageLimit(await calls.addText(kbId, "after"), { resource: "trial", limit: 7, used: 2 }, /subscription has ended.*upgrade/i);
    expect((await calls.get(`/v1/knowledge-bases/${kbId}/documents`)).status).toBe(200);
  });
});

describe("QUARRY_LIMITS=off", () => {
  test("no allowance or count is enforced, and usage is still metered", async () => {
    const offClock = new ManualClock(new Date("2026-05-01T09:00:00.000Z"));
    const unlimited = await startTestServer({ clock: offClock, env: { QUARRY_LIMITS: "off" } });
    try {
      const account = await signup(unlimited);
      const token = account.apiKey;
      const kbs = [];
      for (let i = 0; i < 3; i++) kbs.push(await unlimited.request("POST", "/v1/knowledge-bases", { token, body: { name: `kb${i}` } }));
      expect(kbs.map((r) => r.status)).toEqual([201, 201, 201]);
      offClock.advance(30 * DAY_MS);
      const doc = await unlimited.request("POST", `/v1/knowledge-bases/${kbs[0].body.data.id}/documents/text`, { token, body: { text: "x".repeat(5000) } });
      expect(doc.status).toBe(202);
      await waitForDocument(unlimited, token, kbs[0].body.data.id, doc.body.data.id);
      const usage = (await unlimited.request("GET", "/v1/usage", { token })).body.data;
      expect(usage.usage.pages_processed).toBe(3);
    } finally {
      await unlimited.stop();
    }
  });
});
