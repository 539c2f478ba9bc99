// Durability of the ingestion queue: the real server killed with SIGKILL mid-ingestion and started
// again on the same data dir finishes every document exactly once; a graceful stop hands unfinished
// work to the next start; a document whose processing was cut short too often ends failed.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { openDatabase, type Db } from "../../src/store/db.ts";
import { loadConfig } from "../../src/config.ts";
import { systemClock } from "../../src/clock.ts";
import { Ingestion } from "../../src/ingest/ingestion.ts";
import type { PipelineReport } from "../../src/ingest/pipeline.ts";
import { request, signup, startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { indexRows, ingest, workspace, type Workspace } from "./ingest-helpers.ts";

const REPO = join(import.meta.dir, "..", "..");
const dataDirs: string[] = [];
afterAll(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "quarry-restart-"));
  dataDirs.push(dir);
  return dir;
}

/** The real `quarry serve` as a child process; resolves once it prints its URL. Its log is kept (and its pipe drained). */
async function spawnServer(dataDir: string): Promise<{ proc: Subprocess; api: string; log: () => string }> {
  const proc = Bun.spawn([join(REPO, "node_modules/.bin/bun"), "src/main.ts", "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], {
    cwd: REPO,
    env: { ...process.env, QUARRY_LIMITS: "off", QUARRY_WORKERS: "2" },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let output = "";
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    output += new TextDecoder().decode(value);
    const match = /listening on (http:\/\/\S+?\/api)/.exec(output);
    if (match) {
      void (async () => {
        for (let read = await reader.read(); !read.done; read = await reader.read()) output += new TextDecoder().decode(read.value);
      })();
      return { proc, api: match[1], log: () => output };
    }
  }
  proc.kill("SIGKILL");
  throw new Error(`server did not start:\n${output}`);
}

/** Polls until every document is ready or failed. */
async function settle(api: string, token: string, kbId: string, ids: string[]): Promise<any[]> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const docs = await Promise.all(ids.map(async (id) => (await request(api, "GET", `/v1/knowledge-bases/${kbId}/documents/${id}`, { token })).body.data));
    if (docs.every((d) => d.status === "ready" || d.status === "failed")) return docs;
    if (Date.now() > deadline) throw new Error(`documents still processing: ${docs.map((d) => d.status).join(", ")}`);
    await Bun.sleep(200);
  }
}

function count(db: Db, sql: string): number {
  return db.query<{ n: number }, []>(sql).get()!.n;
}

describe("restart after SIGKILL", () => {
  test("every document that was queued or mid-way ends ready, indexed exactly once", async () => {
    const dataDir = tempDataDir();
    let { proc, api } = await spawnServer(dataDir);
    const ids: string[] = [];
    let token = "";
    let kbId = "";
    try {
      const signupRes = await request(api, "POST", "/auth/signup", { body: { email: "crash@example.com", password: "correct horse battery" } });
      token = signupRes.body.data.api_key;
      kbId = (await request(api, "POST", "/v1/knowledge-bases", { token, body: { name: "crash" } })).body.data.id;
      for (let i = 0; i < 6; i++) {
        const body = { text: `Document ${i} talks about topic ${i}. `.repeat(400 + 100 * i), name: `doc-${i}.txt` };
        const res = await request(api, "POST", `/v1/knowledge-bases/${kbId}/documents/text`, { token, body });
        expect(res.status).toBe(202);
        ids.push(res.body.data.id);
      }
      // Kill as soon as work is under way, with documents in every stage of the queue.
      for (;;) {
        const list = await request(api, "GET", `/v1/knowledge-bases/${kbId}/documents?limit=100`, { token });
        const statuses = list.body.data.map((d: any) => d.status);
        if (statuses.some((s: string) => ["parsing", "chunking", "embedding"].includes(s))) break;
        await Bun.sleep(20);
      }
    } finally {
      proc.kill("SIGKILL");
      await proc.exited;
    }

    const before = openDatabase(join(dataDir, "quarry.db"), { migrate: false });
    const unfinished = count(before, "SELECT COUNT(*) AS n FROM documents WHERE status NOT IN ('ready', 'failed')");
    before.close();
    expect(unfinished).toBeGreaterThan(0);

    const restarted = await spawnServer(dataDir);
    ({ proc, api } = restarted);
    try {
      const docs = await settle(api, token, kbId, ids);
      expect(docs.map((d) => d.status)).toEqual(ids.map(() => "ready"));
      // The operator's log says what recovery did and how each document ended.
      await Bun.sleep(100);
      expect(restarted.log()).toContain(`ingest: ${unfinished} unfinished document${unfinished === 1 ? "" : "s"} queued again`);
      const readyLines = restarted.log().match(new RegExp(`^ingest doc_\\w+ in ${kbId}: ready, no pages, \\d+ chunks, \\d+\\.\\d s$`, "gm")) ?? [];
      expect(readyLines).toHaveLength(unfinished);
      const db = openDatabase(join(dataDir, "quarry.db"), { migrate: false });
      try {
        for (const doc of docs) {
          expect(doc.chunk_count).toBeGreaterThan(0);
          expect(indexRows(db, doc.id)).toEqual({ chunks: doc.chunk_count, vectors: doc.chunk_count});
        }
        const totalChunks = docs.reduce((sum, d) => sum + d.chunk_count, 0);
        expect(count(db, "SELECT COUNT(*) AS n FROM chunks")).toBe(totalChunks);
        expect(count(db, "SELECT COUNT(*) AS n FROM ingest_jobs")).toBe(0);
        // Each document's pages were counted once, whether it finished before or after the kill.
        const pages = docs.reduce((sum, d) => sum + Math.ceil(d.file_size_bytes / 2400), 0);
        expect(count(db, "SELECT COALESCE(SUM(pages_processed), 0) AS n FROM usage_counters")).toBe(pages);
      } finally {
        db.close();
      }
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  });
});

describe("stop and start in process", () => {
  let server: TestServer | null = null;
  afterAll(() => server?.stop());

  /** A data dir holding one ready document, its server stopped. */
  async function stoppedWithReadyDocument(content: string) {
    const dataDir = tempDataDir();
    const running = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
    const ws = await workspace(running, await signup(running));
    const doc = await ingest(running, ws, new File([content], "note.txt"));
    expect(doc.status).toBe("ready");
    await running.stop();
    return { dataDir, ws, doc };
  }

  test("a graceful stop mid-ingestion leaves the work for the next start", async () => {
    const dataDir = tempDataDir();
    server = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
    const ws: Workspace = await workspace(server);
    const res = await server.request("POST", `${ws.docs}/text`, { token: ws.account.apiKey, body: { text: "Rivers carve canyons. ".repeat(1500) } });
    const id = res.body.data.id;
    while ((await server.request("GET", `${ws.docs}/${id}`, { token: ws.account.apiKey })).body.data.status === "pending") await Bun.sleep(10);
    await server.stop();
    const db = openDatabase(join(dataDir, "quarry.db"), { migrate: false });
    // Back in line, and the interrupted attempt is not held against the document.
    expect(db.query("SELECT state, attempts FROM ingest_jobs WHERE document_id = ?").get(id)).toEqual({ state: "queued", attempts: 0 });
    db.close();

    server = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
    const doc = await waitForDocument(server, ws.account.apiKey, ws.kbId, id, 300_000);
    expect(doc.status).toBe("ready");
    expect(indexRows(server.server.ctx.db, id)).toEqual({ chunks: doc.chunk_count, vectors: doc.chunk_count});
    await server.stop();
    server = null;
  });

  test("a document whose processing was interrupted three times ends failed instead of looping", async () => {
    const { dataDir, ws, doc } = await stoppedWithReadyDocument("The ferry leaves at noon.");

    // As if the server had died three times while this document was being embedded.
    const db = openDatabase(join(dataDir, "quarry.db"), { migrate: false });
    db.query("UPDATE documents SET status = 'embedding' WHERE id = ?").run(doc.id);
    db.query("INSERT INTO ingest_jobs (document_id, state, attempts, enqueued_at) VALUES (?, 'running', 3, ?)").run(doc.id, new Date().toISOString());
    db.close();

    server = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
    const failed = (await server.request("GET", `${ws.docs}/${doc.id}`, { token: ws.account.apiKey })).body.data;
    expect(failed.status).toBe("failed");
    expect(failed.error_detail).toMatch(/^Processing was interrupted 3 times/);
    expect(indexRows(server.server.ctx.db, doc.id)).toEqual({ chunks: 0, vectors: 0});
    await server.stop();
    server = null;
  });

  test("a document whose worker keeps crashing is retried, then failed with the reason", async () => {
    const { dataDir, doc } = await stoppedWithReadyDocument("Tides follow the moon.");

    // The queue as the pool drives it (the pool itself is not started), with the document queued again.
    const databasePath = join(dataDir, "quarry.db");
    const db = openDatabase(databasePath, { migrate: false });
    try {
      db.query("UPDATE documents SET status = 'pending' WHERE id = ?").run(doc.id);
      db.query("INSERT INTO ingest_jobs (document_id, state, attempts, enqueued_at) VALUES (?, 'queued', 0, ?)").run(doc.id, new Date().toISOString());
      const log: string[] = [];
      const queue = new Ingestion({ db, databasePath, config: loadConfig({ QUARRY_DATA_DIR: dataDir }), clock: systemClock, log: (line) => log.push(line) });
      const reports: PipelineReport[] = [];
      queue.onProcessed((report) => reports.push(report));
      const status = () => db.query<{ status: string; error_detail: string | null }, [string]>("SELECT status, error_detail FROM documents WHERE id = ?").get(doc.id)!;
      for (let attempt = 1; attempt <= 3; attempt++) {
        expect(queue.claim()).toMatchObject({ id: doc.id });
        await queue.crashed(doc.id, "The ingestion worker stopped unexpectedly (exit code 1)", true);
        if (attempt < 3) expect(status()).toEqual({ status: "pending", error_detail: null });
      }
      expect(status().status).toBe("failed");
      const detail = "The ingestion worker stopped unexpectedly (exit code 1); processing was attempted 3 times. The file may be malformed or too complex to process.";
      expect(status().error_detail).toBe(detail);
      // Told like any failure: the operator's log line and the listeners (the metrics' failed count).
      expect(log.at(-1)).toBe(`ingest ${doc.id} in ${doc.kb_id}: failed: ${detail}`);
      expect(reports).toEqual([{ documentId: doc.id, kbId: doc.kb_id, outcome: "failed", errorDetail: detail, pages: null, chunks: 0, ms: { parse: 0, chunk: 0, embed: 0, index: 0 } }]);
      expect(queue.claim()).toBeNull();
      expect(indexRows(db, doc.id)).toEqual({ chunks: 0, vectors: 0});
    } finally {
      db.close();
    }
  });
});
