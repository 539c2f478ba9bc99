// Search latency: p50/p95/p99 and queries/s per mode at 10k and 100k chunks, one client and 8 concurrent
// clients, without and with a selective filter (1 % of the chunks), no reranking.
//
//   npm run bench:search                 both sizes
//   BENCH_SIZES=10000 npm run bench:search
//   BENCH_REQUESTS=200 (per cell, default 200)
//
// The server runs as its own process (bun src/main.ts) on a temporary data dir, QUARRY_LIMITS=off. The
// chunks are written straight into its database: embedding 100k chunks with the default model would take
// hours on 2 cores, and latency does not depend on where chunks came from. Chunk texts are ~90-word windows
// of the evaluation corpora (../shared/eval); vectors are random unit vectors of the model's dimension;
// each document has 20 chunks and metadata {group: 0–99}. Queries are the evaluation queries, embedded by
// the real model on every vector and hybrid search.
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { COLLECTIONS, loadCollection } from "./eval-collections.ts";

const ROOT = resolve(import.meta.dir, "../..");
const SIZES = (process.env.BENCH_SIZES ?? "10000,100000").split(",").map(Number);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const CHUNKS_PER_DOCUMENT = 20;
const CHUNK_WORDS = 90;
const MODES = ["keyword", "vector", "hybrid"] as const;
const CLIENTS = [1, 8];
const FILTERS: [string, Record<string, unknown> | undefined][] = [
  ["none", undefined],
  ["1 %", { group: { $eq: 7 } }],
];

interface Server {
  url: string;
  stop(): Promise<void>;
}

async function startServer(dataDir: string): Promise<Server> {
  const proc = Bun.spawn(["node_modules/.bin/bun", "src/main.ts", "serve"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", QUARRY_HOST: "127.0.0.1", QUARRY_DATA_DIR: dataDir, QUARRY_LIMITS: "off" },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let banner = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${banner}`);
    banner += new TextDecoder().decode(value);
    const match = /listening on (http:\/\/\S+\/api)/.exec(banner);
    if (match) {
      void (async () => {
        while (!(await reader.read()).done);
      })();
      return {
        url: match[1],
        async stop() {
          proc.kill("SIGTERM");
          await proc.exited;
        },
      };
    }
  }
}

async function call(url: string, path: string, body: unknown, token?: string) {
  const res = await fetch(url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

function corpusWords(): string[] {
  const words: string[] = [];
  for (const name of COLLECTIONS) for (const doc of loadCollection(name).corpus) for (const w of doc.text.split(/\s+/)) if (w) words.push(w);
  return words;
}

function randomUnitVector(dimension: number): Float32Array {
  const v = new Float32Array(dimension);
  let norm = 0;
  for (let i = 0; i < dimension; i++) {
    v[i] = Math.random() - 0.5;
    norm += v[i] * v[i];
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < dimension; i++) v[i] /= norm;
  return v;
}

/** Writes `chunks` ready chunks into the knowledge base, straight into the server's database. */
function fill(dataDir: string, accountId: string, kbId: string, chunks: number, words: string[]): void {
  const db = new Database(join(dataDir, "quarry.db"));
  db.exec("PRAGMA busy_timeout = 10000");
  db.loadExtension(getLoadablePath());
  const dimension = Number(db.query<{ value: string }, []>("SELECT value FROM settings WHERE key = 'embedding_dimension'").get()!.value);
  const now = new Date().toISOString();
  const addDocument = db.query(
    `INSERT INTO documents (id, kb_id, account_id, name, file_type, file_size_bytes, chunk_count, status, metadata, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'txt', 1, ?, 'ready', ?, ?, ?)`,
  );
  const addChunk = db.query<{ rowid: number }, (string | number)[]>(
    `INSERT INTO chunks (id, document_id, kb_id, chunk_index, text, start_page, end_page, token_count, created_at)
     VALUES (?, ?, ?, ?, ?, NULL, 1, 128, ?) RETURNING rowid`,
  );
  const addVector = db.query("INSERT INTO vec_chunks (rowid, kb_id, embedding) VALUES (?, ?, ?)");
  db.transaction(() => {
    for (let d = 0; d < chunks / CHUNKS_PER_DOCUMENT; d++) {
      const docId = `doc_bench${kbId.slice(3)}${d}`;
      addDocument.run(docId, kbId, accountId, `bench-${d}.txt`, CHUNKS_PER_DOCUMENT, JSON.stringify({ group: d % 100 }), now, now);
      for (let i = 0; i < CHUNKS_PER_DOCUMENT; i++) {
        const start = Math.floor(Math.random() * (words.length - CHUNK_WORDS));
        const { rowid } = addChunk.get(`chk_${docId.slice(4)}x${i}`, docId, kbId, i, words.slice(start, start + CHUNK_WORDS).join(" "), now)!;
        addVector.run(rowid, kbId, randomUnitVector(dimension));
      }
    }
  }).immediate();
  db.close();
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(url: string, token: string, kbId: string, queries: string[], body: Record<string, unknown>, clients: number) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < REQUESTS) {
        const query = queries[next++ % queries.length];
        const t = performance.now();
        await call(url, `/v1/knowledge-bases/${kbId}/search`, { ...body, query }, token);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), qps: latencies.length / seconds };
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), "quarry-bench-search-"));
  const server = await startServer(dataDir);
  try {
    const signup = await call(server.url, "/auth/signup", { email: "bench@search.local", password: "bench-password" });
    const token: string = signup.data.api_key;
    const accountId: string = signup.data.account.id;
    const words = corpusWords();
    const queries = COLLECTIONS.flatMap((name) => loadCollection(name).queries.map((q) => q.text));
    const ms = (n: number) => n.toFixed(1);
    console.log(`${REQUESTS} requests per row, rerank off; latency in ms as seen by the HTTP client\n`);
    console.log("| chunks | mode | filter | clients | p50 | p95 | p99 | queries/s |");
    console.log("|---|---|---|---|---|---|---|---|");
    const coldLoads: string[] = [];
    for (const size of SIZES) {
      const kb = await call(server.url, "/v1/knowledge-bases", { name: `bench-${size}` }, token);
      const kbId: string = kb.data.id;
      let t = performance.now();
      fill(dataDir, accountId, kbId, size, words);
      const fillSeconds = (performance.now() - t) / 1000;
      for (const mode of ["keyword", "vector"]) {
        t = performance.now();
        await call(server.url, `/v1/knowledge-bases/${kbId}/search`, { query: "warm up", mode, rerank: false }, token);
        coldLoads.push(`${size} chunks: first ${mode} search (builds the in-memory index) ${ms(performance.now() - t)} ms`);
      }
      coldLoads.push(`${size} chunks: written in ${fillSeconds.toFixed(1)} s`);
      for (const mode of MODES) {
        for (const [filterName, filter] of FILTERS) {
          for (const clients of CLIENTS) {
            const r = await measure(server.url, token, kbId, queries, { mode, rerank: false, filter }, clients);
            console.log(`| ${size} | ${mode} | ${filterName} | ${clients} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.p99)} | ${r.qps.toFixed(0)} |`);
          }
        }
      }
    }
    console.log(`\n${coldLoads.join("\n")}`);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
