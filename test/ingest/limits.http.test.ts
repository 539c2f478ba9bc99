// Plan limits and page metering for documents (spec 8.1, 8.3): pages counted when processing succeeds,
// a document that would overrun the allowance fails and counts nothing, an exhausted allowance, the
// document count, storage and an ended trial are refused with 429 at upload, text and replacement.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ManualClock, signup, startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { findAccountById } from "../../src/store/accounts.ts";
import { consumePages, usageFor } from "../../src/billing/usage.ts";
import type { PipelineReport } from "../../src/ingest/pipeline.ts";
import { ensureFixtures, SHARED_SAMPLES_DIR } from "../fixtures.ts";
import { addText, indexRows, ingest, replace, upload, workspace, type Workspace } from "./ingest-helpers.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
const clock = new ManualClock();
let server: TestServer;
let rateClockMs = 0;
beforeAll(async () => {
  // Each rate-limit check sees a second pass, so the per-second plan rate never gets in the way here.
  server = await startTestServer({ clock, rateLimitClock: () => (rateClockMs += 1000) });
});
afterAll(() => server.stop());

const text = (name: string, content: string | Uint8Array<ArrayBuffer>) => new File([content], name);

function pagesUsed(ws: Workspace): number {
  const account = findAccountById(server.server.ctx.db, ws.account.id)!;
  return usageFor(server.server.ctx.db, account, clock.now()).pages_processed;
}

/** Records earlier usage through the real meter, as if those pages had been processed. */
function alreadyUsed(ws: Workspace, pages: number): void {
  const account = findAccountById(server.server.ctx.db, ws.account.id)!;
  consumePages(server.server.ctx.db, account, pages, clock.now(), true);
}

function expectUsageLimit(res: { status: number; body: any }, details: Record<string, unknown>) {
  expect(res.status).toBe(429);
  expect(res.body.error.code).toBe("USAGE_LIMIT_EXCEEDED");
  expect(res.body.error.details).toEqual(details);
}

describe("page metering", () => {
  test("text types count one page per 2,400 bytes (rounded up), rich types their real pages", async () => {
    const ws = await workspace(server);
    const small = await ingest(server, ws, text("small.txt", "tiny"));
    expect(small.status).toBe("ready");
    expect(pagesUsed(ws)).toBe(1);
    const exact = await ingest(server, ws, text("two.txt", "word ".repeat(960)));
    expect(exact.file_size_bytes).toBe(4800);
    expect(pagesUsed(ws)).toBe(3);
    const manifest = await ensureFixtures();
    const pdf = await ingest(server, ws, text("report.pdf", new Uint8Array(await Bun.file(join(manifest.dir, "report.pdf")).arrayBuffer())));
    expect(pdf).toMatchObject({ status: "ready", page_count: 3 });
    expect(pagesUsed(ws)).toBe(6);
  });

  test("failed documents count nothing", async () => {
    const ws = await workspace(server);
    const broken = await ingest(server, ws, text("broken.json", "{oops"));
    expect(broken.status).toBe("failed");
    expect(pagesUsed(ws)).toBe(0);
  });

  test("a document that would overrun the allowance fails with the reason and counts nothing", async () => {
    const ws = await workspace(server);
    alreadyUsed(ws, 99);
    const reports: PipelineReport[] = [];
    const unsubscribe = server.server.ctx.ingest.onProcessed((report) => reports.push(report));
    const big = await ingest(server, ws, text("big.txt", "word ".repeat(961)));
    unsubscribe();
    expect(big.status).toBe("failed");
    // Known as soon as the file is parsed: it is neither chunked nor embedded first.
    expect(reports.find((r) => r.documentId === big.id)?.ms).toMatchObject({ chunk: 0, embed: 0, index: 0 });
    expect(big.error_detail).toBe(
      "Document has 3 pages but only 1 of the monthly allowance of 100 pages remains. Upgrade your plan or wait for the next billing period; nothing was counted.",
    );
    expect(big.chunk_count).toBe(0);
    expect(indexRows(server.server.ctx.db, big.id)).toEqual({ chunks: 0, vectors: 0});
    expect(pagesUsed(ws)).toBe(99);

    const fits = await ingest(server, ws, text("fits.txt", "one page"));
    expect(fits.status).toBe("ready");
    expect(pagesUsed(ws)).toBe(100);

    const details = { resource: "pages", limit: 100, used: 100 };
    expectUsageLimit(await upload(server, ws, text("more.txt", "more")), details);
    expectUsageLimit(await addText(server, ws, { text: "more" }), details);
    expectUsageLimit(await replace(server, ws, fits.id, text("fits.txt", "again")), details);
    expect(pagesUsed(ws)).toBe(100);
  });

  test("a document whose pages are found to overrun the allowance once parsed keeps its page count, as when the parser finds it", async () => {
    const ws = await workspace(server);
    const pdf = new File([await Bun.file(join(SHARED_SAMPLES_DIR, "pdf", "react_paper.pdf")).arrayBuffer()], "react_paper.pdf");
    const res = await upload(server, ws, pdf);
    expect(res.status).toBe(202);
    // While it is parsed (its figures are read by OCR, seconds), other documents use up all but 30 of the 100 pages.
    const status = async () => (await server.request("GET", `/v1/knowledge-bases/${ws.kbId}/documents/${res.body.data.id}`, { token: ws.account.apiKey })).body.data.status;
    while ((await status()) === "pending") await Bun.sleep(10);
    expect(await status()).toBe("parsing");
    alreadyUsed(ws, 70);
    const failed = await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id, 120_000);
    expect(failed).toMatchObject({ status: "failed", page_count: 31, chunk_count: 0 });
    expect(failed.error_detail).toStartWith("Document has 31 pages but only 30 of the monthly allowance of 100 pages remain.");
    expect(pagesUsed(ws)).toBe(70);
  }, 150_000);
});

describe("account limits", () => {
  test("the trial plan allows 10 documents; the 11th is 429 with resource documents", async () => {
    const ws = await workspace(server);
    for (let i = 0; i < 10; i++) expect((await addText(server, ws, { text: `doc ${i}` })).status).toBe(202);
    expectUsageLimit(await addText(server, ws, { text: "eleven" }), { resource: "documents", limit: 10, used: 10 });
    expectUsageLimit(await upload(server, ws, text("eleven.txt", "eleven")), { resource: "documents", limit: 10, used: 10 });
    // The limit is per account, across knowledge bases.
    const other = await workspace(server, ws.account);
    expectUsageLimit(await addText(server, other, { text: "elsewhere" }), { resource: "documents", limit: 10, used: 10 });
    const list = await server.request("GET", `${ws.docs}?limit=100`, { token: ws.account.apiKey });
    expect(list.body.data.length).toBe(10);
    // Deleting one makes room again.
    await server.request("DELETE", `${ws.docs}/${list.body.data[0].id}`, { token: ws.account.apiKey });
    expect((await addText(server, other, { text: "now it fits" })).status).toBe(202);
  });

  test("the trial plan stores 50 MB; an upload past it is 429 with resource storage", async () => {
    const ws = await workspace(server);
    const bulky = await upload(server, ws, text("bulky.png", new Uint8Array(45 * 1024 * 1024)));
    expect(bulky.status).toBe(202);
    const res = await upload(server, ws, text("extra.png", new Uint8Array(6 * 1024 * 1024)));
    expectUsageLimit(res, { resource: "storage", limit: 50 * 1024 * 1024, used: 45 * 1024 * 1024 });
    // Not "reached": the upload would pass it.
    expect(res.body.error.message).toBe(
      "Storage limit: 6291456 more bytes would exceed the trial plan's 52428800 bytes, of which 47185920 are used. Delete documents or upgrade your plan.",
    );
    // A replacement counts only the difference in size.
    const failed = await waitForDocument(server, ws.account.apiKey, ws.kbId, bulky.body.data.id);
    expect(failed.status).toBe("failed");
    expect((await replace(server, ws, failed.id, text("small.txt", "small now"))).status).toBe(202);
    expect((await upload(server, ws, text("extra.png", new Uint8Array(6 * 1024 * 1024)))).status).toBe(202);
  });
});

describe("trial end", () => {
  test("after the 7-day trial, upload, text and replacement are 429 while reading still works", async () => {
    const ws = await workspace(server);
    const doc = await ingest(server, ws, text("kept.txt", "still readable"));
    clock.advance(8 * DAY_MS);
    try {
      for (const res of [
        await upload(server, ws, text("late.txt", "late")),
        await addText(server, ws, { text: "late" }),
        await replace(server, ws, doc.id, text("late.txt", "late")),
      ]) {
        expect(res.status).toBe(429);
        expect(res.body.error.details.resource).toBe("trial");
      }
      const read = await server.request("GET", `${ws.docs}/${doc.id}`, { token: ws.account.apiKey });
      expect(read.body.data.status).toBe("ready");
    } finally {
      clock.advance(-8 * DAY_MS);
    }
  });
});
