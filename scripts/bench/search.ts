// Search latency: p50/p95/p99 and queries/s per mode at 10k and 100k chunks, one client and 8 concurrent
// clients, without and with a selective filter (1 % of the chunks), no reranking.
//
//   npm run bench:search                 both sizes
//   BENCH_SIZES=10000 npm run bench:search
//   BENCH_REQUESTS=200 (per cell; default: every evaluation query once, in a fixed mixed order)
//
// The server runs as its own process (bun src/main.ts) on a temporary data dir, QUARRY_LIMITS=off. The
// chunks are written straight into its database (bench-server.ts): ~90-word windows of the evaluation
// corpora, random unit vectors, 20 chunks a document with metadata {group: 0–99}. Measuring starts once
// the index worker has folded them into an on-disk segment. Queries are the evaluation queries, embedded
// by the real model on every vector and hybrid search. At 1M chunks: npm run bench:scale.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, corpusWords, fillKnowledgeBase, latencyQueries, measureSearches, startServer, waitForSegment } from "./bench-server.ts";

const SIZES = (process.env.BENCH_SIZES ?? "10000,100000").split(",").map(Number);
const QUERIES = latencyQueries();
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? QUERIES.length);
const MODES = ["keyword", "vector", "hybrid"] as const;
const CLIENTS = [1, 8];
const FILTERS: [string, Record<string, unknown> | undefined][] = [
  ["none", undefined],
  ["1 %", { group: { $eq: 7 } }],
];

function randomUnitVector(_i: number, dimension: number): Float32Array {
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

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), "quarry-bench-search-"));
  const server = await startServer(dataDir);
  try {
    const signup = await call(server.url, "/auth/signup", { email: "bench@search.local", password: "bench-password" });
    const token: string = signup.data.api_key;
    const accountId: string = signup.data.account.id;
    const words = corpusWords();
    const ms = (n: number) => n.toFixed(1);
    console.log(`${REQUESTS} requests per row, rerank off; latency in ms as seen by the HTTP client\n`);
    console.log("| chunks | mode | filter | clients | p50 | p95 | p99 | queries/s |");
    console.log("|---|---|---|---|---|---|---|---|");
    const notes: string[] = [];
    for (const size of SIZES) {
      const kb = await call(server.url, "/v1/knowledge-bases", { name: `bench-${size}` }, token);
      const kbId: string = kb.data.id;
      let t = performance.now();
      fillKnowledgeBase(dataDir, { accountId, kbId, chunks: size, chunksPerDocument: 20, chunkWords: 90, vector: randomUnitVector }, words);
      notes.push(`${size} chunks: written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      await call(server.url, `/v1/knowledge-bases/${kbId}/search`, { query: "warm up", mode: "keyword", rerank: false }, token);
      notes.push(`${size} chunks: segment built ${((await waitForSegment(dataDir, kbId, size)) / 1000).toFixed(1)} s after the first search`);
      for (const mode of MODES) {
        for (const [filterName, filter] of FILTERS) {
          for (const clients of CLIENTS) {
            const r = await measureSearches(server.url, token, kbId, QUERIES, { mode, rerank: false, filter }, clients, REQUESTS);
            console.log(`| ${size} | ${mode} | ${filterName} | ${clients} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.p99)} | ${r.qps.toFixed(0)} |`);
          }
        }
      }
    }
    console.log(`\n${notes.join("\n")}`);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
