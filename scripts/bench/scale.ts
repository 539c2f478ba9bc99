// Search at scale (issue 10): one knowledge base of BENCH_CHUNKS chunks (default 1,000,000) on this machine.
//
//   npm run bench:scale
//   BENCH_CHUNKS=200000 BENCH_DATA_DIR=/tmp/quarry-scale npm run bench:scale   (keeps and reuses the data)
//   BENCH_REQUESTS=459 (per latency cell; default: every evaluation query once, in a fixed mixed order)
//
// Data: the chunks are written straight into the database (bench-server.ts): ~90-word windows of the
// evaluation corpora, 20 chunks a document, metadata {group: 0–99}. Vectors are near-real (as in
// vector-segment.ts): the default model's embeddings of the evaluation corpora's ~15,000 passages, each
// repeated ~65 times with a random jitter of length 0.45 (cosine ≈ 0.91 to its passage), queried by the
// collections' real queries. (Until this data set, 2,000 passages × 500 copies with isotropic Gaussian noise
// of length 0.61 were used: there the exact top 10 is decided by the noise's projections on the query
// across hundreds of passages' copies, which no index that scores a fraction of the chunks can follow;
// recall@10 was 0.64-0.68 there while it is ~0.97 on near-real data.)
//
// Steps: write the data (unless kept) → start the server, whose index worker builds the segment, while a
// probe GETs /api/health every 10 ms (longest stall) → restart, time to the first search answer → latency
// per mode, 1 and 8 clients, no filter and a 1 % filter → vector recall@10 against exact search over the
// regenerated vectors → memory (also of the first server, whose index worker built the segment) → a restart
// with the segment files dropped from the page cache, time to the first answer (default mode). Prints a
// table and a final JSON line.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadModels } from "../../src/models/load.ts";
import { call, corpusWords, evalQueries, fillKnowledgeBase, latencyQueries, measureSearches, memoryOf, percentile, ROOT, startServer, waitForSegment } from "./bench-server.ts";
import { COLLECTIONS, loadCollection } from "./eval-collections.ts";
import { dropFromPageCache } from "../page-cache.ts";

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 1_000_000);
const LATENCY_QUERIES = latencyQueries();
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? LATENCY_QUERIES.length);
const KEEP = process.env.BENCH_DATA_DIR;
/** Length of a copy's jitter (a random unit vector scaled), relative to its unit passage vector. */
const JITTER = 0.45;
/** Written into bench-state.json: a data dir made with other vectors is refused. */
const VECTORS = "near-real-1";
const RECALL_QUERIES = 40;

interface State {
  chunks: number;
  /** VECTORS of the run that wrote the data. */
  vectors?: string;
  kbId: string;
  token: string;
}

/** A deterministic Gaussian stream per chunk (xorshift + Box-Muller), so vectors can be regenerated. */
function noise(i: number, out: Float32Array): void {
  let s = (i + 1) * 2654435761;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) + 1) / 4294967297;
  };
  for (let d = 0; d < out.length; d += 2) {
    const r = Math.sqrt(-2 * Math.log(next()));
    const t = 2 * Math.PI * next();
    out[d] = r * Math.cos(t);
    if (d + 1 < out.length) out[d + 1] = r * Math.sin(t);
  }
}

/** The vector of the i-th chunk: passage i mod P plus a jitter of length JITTER, unit length. */
function chunkVector(passages: Float32Array[], i: number, dimension: number): Float32Array {
  const v = new Float32Array(dimension);
  noise(i, v);
  const passage = passages[i % passages.length];
  let jitterNorm = 0;
  for (let d = 0; d < dimension; d++) jitterNorm += v[d] * v[d];
  const scale = JITTER / Math.sqrt(jitterNorm);
  let norm = 0;
  for (let d = 0; d < dimension; d++) {
    v[d] = passage[d] + scale * v[d];
    norm += v[d] * v[d];
  }
  norm = Math.sqrt(norm);
  for (let d = 0; d < dimension; d++) v[d] /= norm;
  return v;
}

async function embedder() {
  const models = await loadModels({ modelsDir: join(ROOT, "models"), embedModel: "use-lite", rerankModel: null });
  return models.embedder;
}

/** The default model's embeddings of every evaluation passage, cached in the data dir. */
async function passageVectors(dataDir: string): Promise<Float32Array[]> {
  const cache = join(dataDir, "bench-passages.f32");
  const texts = COLLECTIONS.flatMap((name) => loadCollection(name).corpus.map((doc) => doc.text));
  if (!existsSync(cache)) {
    const model = await embedder();
    try {
      const flat = new Float32Array(texts.length * model.dimension);
      for (let p = 0; p < texts.length; p += 32) {
        const { vectors } = await model.embed(texts.slice(p, p + 32), "passage");
        vectors.forEach((v, j) => flat.set(v, (p + j) * model.dimension));
        if (p % 3200 === 0) console.error(`  embedded ${p} of ${texts.length} passages`);
      }
      writeFileSync(cache, flat);
    } finally {
      await model.close();
    }
  }
  const flat = new Float32Array(readFileSync(cache).buffer.slice(0));
  const dimension = flat.length / texts.length;
  return Array.from({ length: texts.length }, (_, p) => flat.subarray(p * dimension, (p + 1) * dimension));
}

async function prepare(dataDir: string, passages: Float32Array[], words: string[]): Promise<State> {
  const stateFile = join(dataDir, "bench-state.json");
  if (existsSync(stateFile)) {
    const state = JSON.parse(readFileSync(stateFile, "utf8")) as State;
    if (state.chunks === CHUNKS && state.vectors === VECTORS) return state;
    throw new Error(`${dataDir} holds ${state.chunks} chunks of ${state.vectors ?? "older"} vectors, not ${CHUNKS} of ${VECTORS}: use another BENCH_DATA_DIR`);
  }
  const server = await startServer(dataDir);
  const signup = await call(server.url, "/auth/signup", { email: "bench@scale.local", password: "bench-password" });
  const token: string = signup.data.api_key;
  const kb = await call(server.url, "/v1/knowledge-bases", { name: "scale" }, token);
  await server.stop();
  const started = performance.now();
  fillKnowledgeBase(
    dataDir,
    { accountId: signup.data.account.id, kbId: kb.data.id, chunks: CHUNKS, chunksPerDocument: 20, chunkWords: 90, vector: (i, d) => chunkVector(passages, i, d) },
    words,
    (n) => n % 100_000 < 2000 && console.error(`  written ${n} chunks (${((performance.now() - started) / 1000).toFixed(0)} s)`),
  );
  const state = { chunks: CHUNKS, vectors: VECTORS, kbId: kb.data.id, token };
  writeFileSync(stateFile, JSON.stringify(state));
  return state;
}

/** GETs /api/health every 10 ms until stopped; the longest answer is the longest stall of the HTTP thread. */
function probe(url: string) {
  let running = true;
  const latencies: number[] = [];
  const done = (async () => {
    while (running) {
      const t = performance.now();
      await fetch(`${url}/health`);
      latencies.push(performance.now() - t);
      await Bun.sleep(10);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      latencies.sort((a, b) => a - b);
      return { count: latencies.length, p95: percentile(latencies, 95), max: latencies.at(-1) ?? 0 };
    },
  };
}

/** Exact cosine top 10 of each query over the regenerated vectors. */
function exactTop10(queries: Float32Array[], passages: Float32Array[], dimension: number): number[][] {
  const best = queries.map(() => [] as { i: number; s: number }[]);
  for (let i = 0; i < CHUNKS; i++) {
    const v = chunkVector(passages, i, dimension);
    for (let q = 0; q < queries.length; q++) {
      let s = 0;
      const query = queries[q];
      for (let d = 0; d < dimension; d++) s += query[d] * v[d];
      const list = best[q];
      if (list.length < 10 || s > list[list.length - 1].s) {
        list.push({ i, s });
        list.sort((a, b) => b.s - a.s);
        if (list.length > 10) list.pop();
      }
    }
  }
  return best.map((list) => list.map((x) => x.i));
}

/** The written-chunk number of a chunk id made by fillKnowledgeBase (chk_bench<kb><doc>x<index>). */
function chunkNumber(kbId: string, chunkId: string): number {
  const [doc, index] = chunkId.slice(`chk_bench${kbId.slice(3)}`.length).split("x").map(Number);
  return doc * 20 + index;
}

async function main() {
  const dataDir = KEEP ?? mkdtempSync(join(tmpdir(), "quarry-bench-scale-"));
  mkdirSync(dataDir, { recursive: true });
  const words = corpusWords();
  const passages = await passageVectors(dataDir);
  const dimension = passages[0].length;
  let t = performance.now();
  const state = await prepare(dataDir, passages, words);
  const writeSeconds = (performance.now() - t) / 1000;
  const queries = evalQueries();
  const result: Record<string, unknown> = { chunks: CHUNKS };
  try {
    // 1. Build the segment (or find it built) while probing the HTTP thread.
    let server = await startServer(dataDir);
    let stall = probe(server.url);
    const buildMs = await waitForSegment(dataDir, state.kbId, CHUNKS);
    // The server's peak includes the index worker's build, which runs inside it.
    result.build = { wait_s: +(buildMs / 1000).toFixed(1), probe: await stall.stop(), write_s: +writeSeconds.toFixed(1), server_memory: memoryOf(server.pid) };
    await server.stop();

    // 2. Restart: time to the first answers.
    t = performance.now();
    server = await startServer(dataDir);
    const listening = performance.now() - t;
    const first: Record<string, number> = {};
    for (const mode of ["keyword", "vector", "hybrid"]) {
      const s = performance.now();
      await call(server.url, `/v1/knowledge-bases/${state.kbId}/search`, { query: queries[0], mode, rerank: false }, state.token);
      first[mode] = +(performance.now() - s).toFixed(1);
    }
    result.restart = { listening_ms: +listening.toFixed(0), first_search_ms: first, first_answer_after_spawn_ms: +(listening + first.keyword).toFixed(0) };

    // 3. Latency, with a probe for stalls.
    stall = probe(server.url);
    const latency: Record<string, unknown>[] = [];
    console.log(`\n${CHUNKS} chunks, ${REQUESTS} requests per row, rerank off; latency in ms as seen by the HTTP client\n`);
    console.log("| mode | filter | clients | p50 | p95 | p99 | mean | queries/s | server CPU ms a search |");
    console.log("|---|---|---|---|---|---|---|---|---|");
    for (const mode of ["keyword", "vector", "hybrid"]) {
      for (const [filterName, filter] of [["none", undefined], ["1 %", { group: { $eq: 7 } }]] as const) {
        for (const clients of [1, 8]) {
          const r = await measureSearches(server.url, state.token, state.kbId, LATENCY_QUERIES, { mode, rerank: false, filter }, clients, REQUESTS, server.pid);
          console.log(
            `| ${mode} | ${filterName} | ${clients} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.mean.toFixed(1)} | ${r.qps.toFixed(0)} | ${r.serverCpuMs.toFixed(1)} |`,
          );
          latency.push({ mode, filter: filterName, clients, p50: +r.p50.toFixed(1), p95: +r.p95.toFixed(1), mean: +r.mean.toFixed(1), qps: +r.qps.toFixed(0), server_cpu_ms: +r.serverCpuMs.toFixed(2) });
        }
      }
    }
    result.latency = latency;
    // The issue's goal: with 8 clients, p95 at most 4 times one client's. With 8 clients the cores are the
    // limit: a search's answer waits for about (8 / cores) searches' CPU time. One client's search uses more
    // than one core when its parts run on several threads at once (cores_one_search: server CPU over mean
    // latency), which shortens one client's latency and not 8 clients'.
    const ratios: Record<string, number> = {};
    const coresOneSearch: Record<string, number> = {};
    for (let i = 0; i + 1 < latency.length; i += 2) {
      const [one, eight] = [latency[i], latency[i + 1]] as { mode: string; filter: string; p95: number; mean: number; server_cpu_ms: number }[];
      ratios[`${one.mode} ${one.filter}`] = +(eight.p95 / one.p95).toFixed(2);
      coresOneSearch[`${one.mode} ${one.filter}`] = +(one.server_cpu_ms / one.mean).toFixed(2);
    }
    result.p95_8_clients_over_1 = ratios;
    result.cores_one_search = coresOneSearch;
    console.log(`\np95 with 8 clients over p95 with 1: ${Object.entries(ratios).map(([cell, ratio]) => `${cell} ${ratio}`).join(", ")}`);
    console.log(`cores one client's search keeps busy: ${Object.entries(coresOneSearch).map(([cell, cores]) => `${cell} ${cores}`).join(", ")}`);
    result.health_probe_during_searches = await stall.stop();

    // 4. Vector recall@10 of the API against exact search.
    const model = await embedder();
    const recallQueries = queries.slice(0, RECALL_QUERIES);
    const { vectors } = await model.embed(recallQueries, "query");
    await model.close();
    const exact = exactTop10(vectors, passages, dimension);
    let found = 0;
    for (const [q, query] of recallQueries.entries()) {
      const data = await call(server.url, `/v1/knowledge-bases/${state.kbId}/search`, { query, mode: "vector", rerank: false, top_k: 10 }, state.token);
      const got = new Set((data.data.results as { chunk_id: string }[]).map((r) => chunkNumber(state.kbId, r.chunk_id)));
      found += exact[q].filter((i) => got.has(i)).length;
    }
    result.vector_recall_at_10 = +(found / (10 * recallQueries.length)).toFixed(3);
    result.memory = memoryOf(server.pid);
    await server.stop();

    // 5. Restart with the segment files out of memory (as after a reboot, or once the OS has let them go):
    // time to the first answer of a search in the default mode (vector).
    dropFromPageCache(join(dataDir, "indexes"));
    t = performance.now();
    server = await startServer(dataDir);
    const coldListening = performance.now() - t;
    t = performance.now();
    await call(server.url, `/v1/knowledge-bases/${state.kbId}/search`, { query: queries[1], rerank: false }, state.token);
    const coldSearch = performance.now() - t;
    result.cold_restart = { listening_ms: +coldListening.toFixed(0), first_search_ms: +coldSearch.toFixed(1), first_answer_after_spawn_ms: +(coldListening + coldSearch).toFixed(0) };
    await server.stop();
  } finally {
    if (!KEEP) rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`\n${JSON.stringify(result, null, 2)}`);
  console.log(JSON.stringify(result));
}

await main();
