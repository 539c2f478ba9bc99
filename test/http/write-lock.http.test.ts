// Writes a request makes while another connection (an ingestion worker, the index worker) holds SQLite's
// write lock wait with the HTTP thread free (store/db.ts writeTxWhenFree): other requests are answered
// meanwhile, and the waiting ones finish once the lock is released. The other connection is a second
// real connection to the server's database file, holding the lock the way a worker's transaction does.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase, type Db } from "../../src/store/db.ts";
import { startTestServer, type ApiResponse, type TestServer } from "../helpers/server.ts";
import { createKb, searchRaw, type SearchKb } from "../search/search-helpers.ts";

let server: TestServer;
let kb: SearchKb;
let worker: Db;

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
  kb = await createKb(server);
  worker = openDatabase(join(server.dataDir, "quarry.db"), { migrate: false });
});
afterAll(async () => {
  worker.close();
  await server.stop();
});

async function searchQueriesUsed(): Promise<number> {
  return (await server.request("GET", "/v1/usage", { token: kb.account.apiKey })).body.data.usage.search_queries;
}

/** A request under way, and whether its response has come. */
interface Tracked {
  done: Promise<ApiResponse>;
  answered(): boolean;
}

function tracked(request: Promise<ApiResponse>): Tracked {
  let answered = false;
  const done = request.then((response) => {
    answered = true;
    return response;
  });
  return { done, answered: () => answered };
}

test("a search and an upload wait for the write lock without holding up other requests; both finish once it is free", async () => {
  const before = await searchQueriesUsed();
  worker.exec("BEGIN IMMEDIATE");
  let search: Tracked;
  let upload: Tracked;
  try {
    search = tracked(searchRaw(server, kb, { query: "refunds", mode: "keyword" }));
    upload = tracked(
      server.request("POST", `/v1/knowledge-bases/${kb.kbId}/documents/text`, { token: kb.account.apiKey, body: { name: "r.txt", text: "Refunds within 14 days." } }),
    );
    await Bun.sleep(50); // time for both to reach their writes
    // Answered while the lock is still held: before, the search slept in SQLite's busy wait with the
    // whole event loop (here the test's too) until the busy timeout, and then failed.
    expect((await server.request("GET", "/health")).status).toBe(200);
    expect((await server.request("GET", `/v1/knowledge-bases/${kb.kbId}`, { token: kb.account.apiKey })).status).toBe(200);
    expect(search.answered()).toBe(false);
    expect(upload.answered()).toBe(false);
  } finally {
    worker.exec("COMMIT");
  }
  expect((await search.done).status).toBe(200);
  expect((await upload.done).status).toBe(202);
  expect(await searchQueriesUsed()).toBe(before + 1);
});

test("the request history is complete when read while a worker holds the write lock", async () => {
  const res = await searchRaw(server, kb, { query: "history", mode: "keyword" });
  expect(res.status).toBe(200);
  const requestId = res.headers.get("x-request-id")!;
  worker.exec("BEGIN IMMEDIATE");
  let entry: Tracked;
  try {
    // The periodic write of the buffered entries, under way: it waits for the lock, and reading the history
    // waits for it.
    void server.server.ctx.requestLog.flush();
    entry = tracked(server.request("GET", `/v1/requests/${requestId}`, { token: kb.account.apiKey }));
    await Bun.sleep(50); // time for the read to reach the write
    expect((await server.request("GET", "/health")).status).toBe(200);
    expect(entry.answered()).toBe(false);
  } finally {
    worker.exec("COMMIT");
  }
  const logged = await entry.done;
  expect(logged.status).toBe(200);
  expect(logged.body.data.path).toBe(`/api/v1/knowledge-bases/${kb.kbId}/search`);
});
