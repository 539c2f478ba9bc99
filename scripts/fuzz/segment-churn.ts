// `npm run fuzz:churn`: search indexes under churn. Six clients search three knowledge bases in every mode
// (half of them filtered on metadata), list ready documents and read the knowledge bases, while three
// writers add text documents with metadata, replace some (PUT) or change their metadata (PATCH), list
// chunks, delete every third one, and every 25 documents delete their knowledge base and create another.
// The server builds a segment every 3 changes (QUARRY_SEGMENT_MIN_CHANGES) and, with CHURN_INDEX_MEMORY_MB=1,
// lets indexes go and reopens them on every search. Segments are published, taken in, replaced and removed
// while searches hold them. A PUT of a document still being processed is refused (409), as documented.
//
//   npm run fuzz:churn                      (CHURN_SECONDS=60)
//
// Passes when no request answered 5xx or failed outright and the server is still running; prints a JSON line.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../bench/bench-server.ts";

const SECONDS = Number(process.env.CHURN_SECONDS ?? 60);
const SEARCHERS = 6;
const WRITERS = 3;
/** Requests that failed outright (the server is gone) before the clients stop. */
const GIVE_UP_AFTER = 100;
const WORDS = "river mountain ocean forest desert volcano glacier canyon island valley meadow prairie tundra jungle swamp".split(" ");

const dataDir = mkdtempSync(join(tmpdir(), "quarry-churn-"));
const server = await startServer(dataDir, {
  QUARRY_SEGMENT_MIN_CHANGES: "3",
  ...(process.env.CHURN_INDEX_MEMORY_MB ? { QUARRY_INDEX_MEMORY_MB: process.env.CHURN_INDEX_MEMORY_MB } : {}),
});
const statuses = new Map<number, number>();
let broken = 0;

async function request(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; data?: any }> {
  try {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    return { status: response.status, data: ((await response.json()) as { data?: unknown }).data };
  } catch {
    broken++;
    return { status: 0 };
  }
}

const token: string = (await request("POST", "/auth/signup", { email: "churn@quarry.local", password: "churn-password" })).data.api_key;
/** A new knowledge base's id (undefined should the server not answer). */
const newKnowledgeBase = async (name: string): Promise<string | undefined> => (await request("POST", "/v1/knowledge-bases", { name }, token)).data?.id;
const kbs = (await Promise.all(Array.from({ length: WRITERS }, (_, i) => newKnowledgeBase(`churn ${i}`)))) as string[];
const deadline = Date.now() + SECONDS * 1000;
const text = (i: number) => Array.from({ length: 120 }, (_, j) => WORDS[(i * 7 + j * 3) % WORDS.length]).join(" ");

async function replace(kb: string, id: string, i: number): Promise<void> {
  const form = new FormData();
  form.append("file", new Blob([text(i + 1000)], { type: "text/plain" }), `r${i}.txt`);
  if (i % 2 === 0) form.append("metadata", JSON.stringify({ topic: WORDS[(i + 1) % 4] }));
  try {
    const response = await fetch(`${server.url}/v1/knowledge-bases/${kb}/documents/${id}`, { method: "PUT", headers: { authorization: `Bearer ${token}` }, body: form });
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    await response.arrayBuffer();
  } catch {
    broken++;
  }
}

async function writer(slot: number): Promise<void> {
  for (let i = 1; Date.now() < deadline && broken < GIVE_UP_AFTER; i++) {
    const kb = kbs[slot];
    const document = await request("POST", `/v1/knowledge-bases/${kb}/documents/text`, { text: text(i), metadata: { topic: WORDS[i % 4], n: i } }, token);
    const id = document.data?.id;
    if (id && i % 4 === 1) await replace(kb, id, i);
    if (id && i % 5 === 2) await request("PATCH", `/v1/knowledge-bases/${kb}/documents/${id}`, { metadata: { topic: WORDS[(i + 2) % 4], n: -i } }, token);
    if (id && i % 2 === 0) await request("GET", `/v1/knowledge-bases/${kb}/documents/${id}/chunks?limit=5`, undefined, token);
    if (document.status === 202 && i % 3 === 0) await request("DELETE", `/v1/knowledge-bases/${kb}/documents/${document.data?.id}`, undefined, token);
    if (i % 25 === 0) {
      await request("DELETE", `/v1/knowledge-bases/${kb}`, undefined, token);
      kbs[slot] = (await newKnowledgeBase(`churn ${slot}.${i}`)) ?? kb;
    }
  }
}

async function searcher(seed: number): Promise<void> {
  for (let i = seed; Date.now() < deadline && broken < GIVE_UP_AFTER; i += SEARCHERS) {
    const query = `${WORDS[i % WORDS.length]} ${WORDS[(i * 5) % WORDS.length]}`;
    const filter = i % 4 === 0 ? { filter: { topic: { $eq: WORDS[i % 4] } } } : i % 4 === 1 ? { filter: { n: { $gte: i % 50 } } } : {};
    if (i % 7 === 0) await request("GET", `/v1/knowledge-bases/${kbs[i % WRITERS]}/documents?limit=20&status=ready`, undefined, token);
    if (i % 11 === 0) await request("GET", `/v1/knowledge-bases/${kbs[i % WRITERS]}`, undefined, token);
    await request("POST", `/v1/knowledge-bases/${kbs[i % WRITERS]}/search`, { query, mode: ["vector", "keyword", "hybrid"][i % 3], rerank: false, ...filter }, token);
  }
}

await Promise.all([...kbs.map((_, slot) => writer(slot)), ...Array.from({ length: SEARCHERS }, (_, seed) => searcher(seed))]);
const alive = (await request("GET", "/health")).status === 200;
await server.stop();
rmSync(dataDir, { recursive: true, force: true });
const serverErrors = [...statuses].filter(([status]) => status >= 500).reduce((n, [, count]) => n + count, 0);
const passed = alive && broken === 0 && serverErrors === 0;
console.log(JSON.stringify({ seconds: SECONDS, statuses: Object.fromEntries(statuses), failed_requests: broken, server_alive: alive, passed }));
process.exit(passed ? 0 : 1);
