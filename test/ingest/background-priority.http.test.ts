// Ingestion and segment builds run at a lower scheduling priority than requests (Linux, where a nice value
// is a thread's): their threads and the parser processes they start, so that searches keep their latency
// while documents are ingested. The HTTP thread and the search threads stay at normal priority.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { childrenOf, threadNiceValues } from "../helpers/processes.ts";
import { BACKGROUND_NICE } from "../../src/background-priority.ts";
import { addText, workspace } from "./ingest-helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off", QUARRY_WORKERS: "2" } });
});
afterAll(() => server.stop());

test.if(process.platform === "linux")("ingestion threads, the index worker and parser processes run at nice 10; requests at 0", async () => {
  const ws = await workspace(server);
  const added = await addText(server, ws, { name: "priority.txt", text: "Background work yields the cores to searches. ".repeat(200) });
  expect(added.status).toBe(202);
  expect((await waitForDocument(server, ws.account.apiKey, ws.kbId, added.body.data.id)).status).toBe("ready");

  const threads = threadNiceValues(process.pid);
  // This thread serves the HTTP requests.
  expect(threads.get(process.pid)).toBe(0);
  // Two ingestion workers and the index worker, at least (ONNX Runtime's threads inherit it too).
  expect([...threads.values()].filter((nice) => nice === BACKGROUND_NICE).length).toBeGreaterThanOrEqual(3);
  // The search threads, the model thread and the runtime's own threads stay at normal priority.
  expect([...threads.values()].filter((nice) => nice === 0).length).toBeGreaterThanOrEqual(4);
  const parsers = childrenOf(process.pid);
  expect(parsers.length).toBeGreaterThanOrEqual(1);
  for (const pid of parsers) for (const nice of threadNiceValues(pid).values()) expect(nice).toBe(BACKGROUND_NICE);

  const search = await server.request("POST", `/v1/knowledge-bases/${ws.kbId}/search`, { token: ws.account.apiKey, body: { query: "cores searches" } });
  expect(search.status).toBe(200);
  expect(search.body.data.results.length).toBeGreaterThan(0);
});
