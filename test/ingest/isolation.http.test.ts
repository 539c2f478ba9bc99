// One document's processing costs only that document: a parser that goes over the memory limit is
// stopped and only its document fails; deleting a document (or its knowledge base) while it is parsed or
// embedded cancels its work at once, so nothing of it is indexed and the worker moves on.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PipelineReport } from "../../src/ingest/pipeline.ts";
import { startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { join } from "node:path";
import { SHARED_SAMPLES_DIR } from "../fixtures.ts";
import { addText, upload, workspace, type Workspace } from "./ingest-helpers.ts";

/** Small enough that an 8 MB JSON file goes over it (its objects take ~20× their bytes), large enough for a text file. */
const PARSE_MEMORY_MB = 150;

let server: TestServer;
const reports: PipelineReport[] = [];
beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off", QUARRY_PARSE_MEMORY_MB: String(PARSE_MEMORY_MB) } });
  server.server.ctx.ingest.onProcessed((report) => reports.push(report));
});
afterAll(() => server.stop());

/** A legal JSON file whose parse needs far more memory than the file's size. */
function memoryHungryJson(): File {
  const records = Array.from({ length: 250_000 }, (_, i) => ({ id: i, name: `record ${i}`, tags: ["alpha", "beta"] }));
  return new File([JSON.stringify(records)], "records.json", { type: "application/json" });
}

/** Text that takes a while to chunk and embed; `marker` appears in no other document. */
function longText(marker: string): string {
  return Array.from({ length: 3000 }, (_, i) => `Paragraph ${i} mentions ${marker} and topic number ${i * 7} in passing.`).join("\n\n");
}

async function waitForStatus(ws: Workspace, docId: string, statuses: string[]): Promise<void> {
  for (;;) {
    const res = await server.request("GET", `${ws.docs}/${docId}`, { token: ws.account.apiKey });
    if (res.status !== 200) throw new Error(`poll ${docId}: ${res.status}`);
    if (statuses.includes(res.body.data.status)) return;
    if (res.body.data.status === "ready" || res.body.data.status === "failed") throw new Error(`${docId} finished before reaching ${statuses}`);
    await Bun.sleep(20);
  }
}

async function keywordSearch(ws: Workspace, query: string): Promise<any[]> {
  const res = await server.request("POST", `/v1/knowledge-bases/${ws.kbId}/search`, { token: ws.account.apiKey, body: { query, mode: "keyword" } });
  expect(res.status).toBe(200);
  return res.body.data.results;
}

function chunkRows(docId: string): number {
  return server.server.ctx.db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?").get(docId)!.n;
}

describe("parser memory limit", () => {
  test("a file whose parser goes over the limit fails alone; the document after it is ready and the server keeps answering", async () => {
    const ws = await workspace(server);
    const hungry = await upload(server, ws, memoryHungryJson());
    const normal = await addText(server, ws, { text: "An ordinary note about watering tomatoes in the evening.", name: "note.txt" });
    expect([hungry.status, normal.status]).toEqual([202, 202]);

    const failed = await waitForDocument(server, ws.account.apiKey, ws.kbId, hungry.body.data.id);
    expect(failed.status).toBe("failed");
    expect(failed.error_detail).toBe(`Parsing used more than ${PARSE_MEMORY_MB} MB of memory and was stopped`);
    expect((await waitForDocument(server, ws.account.apiKey, ws.kbId, normal.body.data.id)).status).toBe("ready");
    expect((await server.request("GET", "/health")).status).toBe(200);
    expect((await keywordSearch(ws, "tomatoes")).map((r) => r.document_id)).toEqual([normal.body.data.id]);
  });

  test("megabytes that are no PDF, named .pdf, fail as not a PDF rather than by going over the limit", async () => {
    const ws = await workspace(server);
    const junk = await upload(server, ws, new File([Buffer.alloc(8 * 1024 * 1024, "A")], "junk.pdf"));
    expect(junk.status).toBe(202);
    const failed = await waitForDocument(server, ws.account.apiKey, ws.kbId, junk.body.data.id);
    expect([failed.status, failed.error_detail]).toEqual(["failed", "Not a valid PDF file"]);
    // A real PDF behind a preamble longer than the 1024 bytes the format allows is still read, as pdfjs reads it.
    const pdf = await Bun.file(join(SHARED_SAMPLES_DIR, "pdf", "sample_pdf_1.pdf")).arrayBuffer();
    const wrapped = await upload(server, ws, new File([Buffer.alloc(4096, "A"), pdf], "wrapped.pdf"));
    const read = await waitForDocument(server, ws.account.apiKey, ws.kbId, wrapped.body.data.id);
    expect([read.status, read.page_count]).toEqual(["ready", 4]);
  });
});

describe("deleting a document that is being processed", () => {
  for (const step of ["parsing", "embedding"]) {
    test(`while ${step}: its work is cancelled, nothing of it is indexed, and the next document is processed`, async () => {
      const ws = await workspace(server);
      // A large JSON file parses for seconds (under the limit here only because it is smaller); long text embeds for seconds.
      const busy =
        step === "parsing"
          ? await upload(server, ws, new File([JSON.stringify(Array.from({ length: 60_000 }, (_, i) => ({ note: `zebracorn ${i}` })))], "big.json"))
          : await addText(server, ws, { text: longText("zebracorn"), name: "long.txt" });
      const next = await addText(server, ws, { text: "A short note on pruning apple trees in winter.", name: "next.txt" });
      const busyId = busy.body.data.id;
      await waitForStatus(ws, busyId, [step]);

      expect((await server.request("DELETE", `${ws.docs}/${busyId}`, { token: ws.account.apiKey })).status).toBe(200);
      expect((await waitForDocument(server, ws.account.apiKey, ws.kbId, next.body.data.id)).status).toBe("ready");

      expect((await server.request("GET", `${ws.docs}/${busyId}`, { token: ws.account.apiKey })).status).toBe(404);
      expect(reports.find((r) => r.documentId === busyId)?.outcome).toBe("cancelled");
      expect(chunkRows(busyId)).toBe(0);
      expect(await keywordSearch(ws, "zebracorn")).toEqual([]);
    });
  }

  test("deleting the knowledge base cancels its document's processing; another knowledge base's document is processed", async () => {
    const doomed = await workspace(server);
    const other = await workspace(server, doomed.account);
    const busy = await addText(server, doomed, { text: longText("quokkafish"), name: "long.txt" });
    const next = await addText(server, other, { text: "Notes on sharpening kitchen knives.", name: "knives.txt" });
    await waitForStatus(doomed, busy.body.data.id, ["embedding"]);

    expect((await server.request("DELETE", `/v1/knowledge-bases/${doomed.kbId}`, { token: doomed.account.apiKey })).status).toBe(200);
    expect((await waitForDocument(server, other.account.apiKey, other.kbId, next.body.data.id)).status).toBe("ready");
    await server.server.ctx.deletions.settled();
    expect(reports.find((r) => r.documentId === busy.body.data.id)?.outcome).toBe("cancelled");
    expect(chunkRows(busy.body.data.id)).toBe(0);
  });
});
