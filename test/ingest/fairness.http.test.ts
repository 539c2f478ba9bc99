// Accounts take turns in the ingestion queue: one account's long queue does not hold back another
// account's upload. With one worker, a document uploaded while another account has many queued is
// processed right after the document running at that moment.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { addText, workspace } from "./ingest-helpers.ts";

let server: TestServer;
/** Document ids in the order their processing finished. */
const finished: string[] = [];
beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off", QUARRY_WORKERS: "1" } });
  server.server.ctx.ingest.onProcessed((report) => finished.push(report.documentId));
});
afterAll(() => server.stop());

const QUEUED = 12;
const note = (topic: string, i: number) => ({ text: `Notes on ${topic}, part ${i}. `.repeat(300), name: `${topic}-${i}.txt` });

test("an account's upload is processed before another account's long queue drains", async () => {
  const busy = await workspace(server);
  const queuedIds: string[] = [];
  for (let i = 0; i < QUEUED; i++) {
    const res = await addText(server, busy, note("gardening", i));
    expect(res.status).toBe(202);
    queuedIds.push(res.body.data.id);
  }

  const other = await workspace(server);
  const res = await addText(server, other, note("astronomy", 0));
  expect(res.status).toBe(202);
  // One worker: at this point at most one of the busy account's documents is running; the rest wait.
  const finishedBefore = finished.filter((id) => queuedIds.includes(id)).length;
  expect(finishedBefore).toBeLessThan(QUEUED - 2);
  const otherId = res.body.data.id;

  expect((await waitForDocument(server, other.account.apiKey, other.kbId, otherId)).status).toBe("ready");
  // Strict first-in-first-out would put it behind all twelve.
  expect(finished.indexOf(otherId)).toBeLessThanOrEqual(finishedBefore + 1);
  const stillQueued = await Promise.all(
    queuedIds.map(async (id) => (await server.request("GET", `${busy.docs}/${id}`, { token: busy.account.apiKey })).body.data.status),
  );
  expect(stillQueued.filter((status) => status === "pending").length).toBeGreaterThan(0);

  for (const id of queuedIds) expect((await waitForDocument(server, busy.account.apiKey, busy.kbId, id)).status).toBe("ready");
});
