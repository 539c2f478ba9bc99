// `npm run fuzz:crash`: nothing accepted is lost to a crash. Six rounds: a client adds text documents, each
// with a word of its own, while the server builds a search segment every 3 changes
// (QUARRY_SEGMENT_MIN_CHANGES); at a random moment the server is killed with SIGKILL and started again on
// the same data directory. After each restart every document accepted so far (202) must end ready and be
// found by a keyword search for its word.
//
//   npm run fuzz:crash                      (CRASH_ROUNDS=6, CRASH_SEED=1)
//
// Prints a line per round and a final JSON line; exits 1 on any loss or 5xx.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type BenchServer } from "../bench/bench-server.ts";
import { uniform } from "../seeded-random.ts";

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 6);
const random = uniform(Number(process.env.CRASH_SEED ?? 1));
const DOCUMENTS_PER_ROUND = 40;
/** How long a restarted server may take to finish what was accepted. */
const SETTLE_MS = 150_000;

const dataDir = mkdtempSync(join(tmpdir(), "quarry-crash-"));
const start = () => startServer(dataDir, { QUARRY_SEGMENT_MIN_CHANGES: "3" });
let server: BenchServer = await start();
let serverErrors = 0;

async function request(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; data?: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status >= 500) serverErrors++;
  return { status: response.status, data: ((await response.json()) as { data?: unknown }).data };
}

/** SIGKILL, then waits until the process is gone. */
async function kill(pid: number): Promise<void> {
  process.kill(pid, "SIGKILL");
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await Bun.sleep(20);
  }
}

const token: string = (await request("POST", "/auth/signup", { email: "crash@quarry.local", password: "crash-password" })).data.api_key;
const kbId: string = (await request("POST", "/v1/knowledge-bases", { name: "crash" }, token)).data.id;
/** Each accepted document's id by its own word. */
const accepted = new Map<string, string>();
let next = 0;
const rounds: { accepted: number; not_ready: number; not_found: number }[] = [];

for (let round = 0; round < ROUNDS; round++) {
  const writing = (async () => {
    for (let i = 0; i < DOCUMENTS_PER_ROUND; i++) {
      const word = `crashword${next++}q`;
      const answer = await request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, { text: `${word} river mountain ocean ${"filler ".repeat(50)}` }, token).catch(() => null);
      if (answer?.status === 202) accepted.set(word, answer.data.id);
      if (!answer) return; // the server is gone
    }
  })();
  await Bun.sleep(300 + random() * 1500);
  await kill(server.pid);
  await writing;
  server = await start();

  const settleBy = Date.now() + SETTLE_MS;
  let notReady = accepted.size;
  while (notReady > 0 && Date.now() < settleBy) {
    notReady = 0;
    for (const id of accepted.values()) if ((await request("GET", `/v1/knowledge-bases/${kbId}/documents/${id}`, undefined, token)).data?.status !== "ready") notReady++;
    if (notReady > 0) await Bun.sleep(500);
  }
  let notFound = 0;
  for (const [word, id] of accepted) {
    const found = await request("POST", `/v1/knowledge-bases/${kbId}/search`, { query: word, mode: "keyword", rerank: false, top_k: 5 }, token);
    if (!found.data?.results?.some((hit: { document_id: string }) => hit.document_id === id)) notFound++;
  }
  rounds.push({ accepted: accepted.size, not_ready: notReady, not_found: notFound });
  console.log(`round ${round}: ${accepted.size} documents accepted so far, ${notReady} not ready, ${notFound} not found by their word`);
}

await server.stop();
rmSync(dataDir, { recursive: true, force: true });
const passed = serverErrors === 0 && rounds.every((r) => r.not_ready === 0 && r.not_found === 0);
console.log(JSON.stringify({ rounds, server_errors: serverErrors, passed }));
process.exit(passed ? 0 : 1);
