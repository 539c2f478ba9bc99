// A parser process stopped from outside Quarry (the kernel's out-of-memory killer, an operator) says nothing
// about the file: its document is processed again, as after a crashed worker, instead of failing as malformed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { childrenOf } from "../helpers/processes.ts";
import { SHARED_SAMPLES_DIR } from "../fixtures.ts";
import { upload, workspace } from "./ingest-helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off", QUARRY_WORKERS: "1" } });
});
afterAll(() => server.stop());

const parserProcesses = () => childrenOf(process.pid).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("__parse-child"));

test.if(process.platform === "linux")("a parser killed with SIGKILL mid-document is started again and the document ends ready", async () => {
  const ws = await workspace(server);
  // Its figures are read by OCR: several seconds of parsing to kill it in.
  const file = new File([readFileSync(join(SHARED_SAMPLES_DIR, "pdf", "react_paper.pdf"))], "react_paper.pdf", { type: "application/pdf" });
  const uploaded = await upload(server, ws, file);
  expect(uploaded.status).toBe(202);
  const docPath = `/v1/knowledge-bases/${ws.kbId}/documents/${uploaded.body.data.id}`;
  for (let waited = 0; (await server.request("GET", docPath, { token: ws.account.apiKey })).body.data.status !== "parsing"; waited += 50) {
    if (waited > 60_000) throw new Error("the document never started parsing");
    await Bun.sleep(50);
  }
  await Bun.sleep(500);
  const parsers = parserProcesses();
  expect(parsers.length).toBe(1);
  process.kill(parsers[0]!, "SIGKILL");

  const document = await waitForDocument(server, ws.account.apiKey, ws.kbId, uploaded.body.data.id);
  expect(document).toMatchObject({ status: "ready", page_count: 31, error_detail: null });
  expect(document.chunk_count).toBeGreaterThan(50);
}, 180_000);
