// The vector segment on its own (src/search/vector/): build time and the builder's peak RSS, file sizes,
// open time, search latency (p50/p95; limit 10 and 100; unfiltered and 1 % / 10 % filters), recall@10
// against exact float cosine, an incremental update (1 % removed, 1 % added) against a full build, and
// recall@10 and latency by the share of the segment a search scores (SEARCH_TUNING.visitedShare).
//
//   bun scripts/bench/vector-segment.ts
//   BENCH_VECTORS=1000000 (default 100000)   BENCH_DATA=real|clustered|random (default clustered)
//   BENCH_DIR=/path to keep the segments (default: a temporary folder, removed at the end)
//   BENCH_REAL=/path/file.f32 with real embeddings (BENCH_DATA=real; written on first use)
//
// Vectors are 512-d unit vectors. real: the default model's embeddings of the evaluation corpora's
// passages (npl, cisi, med; ~14k), each repeated with noise (cosine ~0.9 to its source) up to the count,
// queried by the collections' real queries. clustered and random are synthetic
// (test/search/vector-segment-data.ts): unit vectors around count/500 centres, or uniformly random ones,
// queried from the same distribution. The build time includes
// generating the vectors (streamed into the builder, as the index worker streams them from the database).
// One JSON line at the end.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SEARCH_TUNING, VectorSegment } from "../../src/search/vector/segment.ts";
import { writeVectorSegment, type VectorRow } from "../../src/search/vector/segment-writer.ts";
import { unitVectorStream } from "../../test/search/vector-segment-data.ts";
import { uniform } from "../seeded-random.ts";
import { BUILT_IN_MODELS_DIR } from "../../src/models/load.ts";
import { OnnxEmbedder } from "../../src/models/onnx-embedder.ts";
import { loadCollection } from "./eval-collections.ts";

const DIMENSION = 512;
const COUNT = Number(process.env.BENCH_VECTORS ?? 100_000);
const DATA = (["real", "random"] as const).find((name) => name === process.env.BENCH_DATA) ?? "clustered";
const CLUSTERS = DATA === "clustered" ? Math.max(100, COUNT / 500) : undefined;
const QUERIES = 50;
const SEARCHES = 200;
const keep = process.env.BENCH_DIR;
const root = keep ?? mkdtempSync(join(tmpdir(), "quarry-bench-vectors-"));

/** The default model's embeddings of real passages, then of real queries (read from BENCH_REAL if it exists). */
async function realEmbeddings(): Promise<{ passages: Float32Array[]; queries: Float32Array[] }> {
  const cache = process.env.BENCH_REAL ?? join(root, "real.f32");
  const texts = {
    passages: ["npl", "cisi", "med"].flatMap((name) => loadCollection(name).corpus.map((doc) => doc.text)),
    queries: ["npl", "cisi", "med", "cran"].flatMap((name) => loadCollection(name).queries.map((query) => query.text)).slice(0, QUERIES),
  };
  if (!existsSync(cache)) {
    const embedder = await OnnxEmbedder.load(join(BUILT_IN_MODELS_DIR, "use-lite"));
    const embed = async (list: string[], side: "passage" | "query") => {
      const out: Float32Array[] = [];
      for (let i = 0; i < list.length; i += 32) out.push(...(await embedder.embed(list.slice(i, i + 32), side)).vectors);
      return out;
    };
    const all = [...(await embed(texts.passages, "passage")), ...(await embed(texts.queries, "query"))];
    writeFileSync(cache, Buffer.concat(all.map((v) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength))));
  }
  const bytes = readFileSync(cache);
  const all = Array.from({ length: bytes.byteLength / 4 / DIMENSION }, (_, i) => new Float32Array(bytes.buffer.slice(bytes.byteOffset + i * DIMENSION * 4, bytes.byteOffset + (i + 1) * DIMENSION * 4)));
  return { passages: all.slice(0, all.length - QUERIES), queries: all.slice(all.length - QUERIES) };
}

const real = DATA === "real" ? await realEmbeddings() : null;

/** Real passages first, then each again with noise; same seed, same vectors. */
function* nearRealStream(count: number): Generator<Float32Array> {
  const noise = unitVectorStream(count, DIMENSION, 3);
  for (let i = 0; i < count; i++) {
    const source = real!.passages[i % real!.passages.length];
    const jitter = noise.next().value!;
    const v = i < real!.passages.length ? source : Float32Array.from(source, (x, d) => x + 0.45 * jitter[d]);
    const norm = Math.hypot(...v);
    yield v.map((x) => x / norm);
  }
}

const stream = () =>
  real ? nearRealStream(COUNT + COUNT / 100) : unitVectorStream(COUNT + QUERIES + COUNT / 100, DIMENSION, 1, CLUSTERS);
/** Vectors from..to of the stream (queries excluded for real data) as rows numbered from rowidOffset. */
function* rows(from: number, to: number, rowidOffset = 1): Generator<VectorRow> {
  let i = 0;
  for (const vector of stream()) {
    if (i >= to) return;
    if (i >= from) yield { rowid: i + rowidOffset - from, vector };
    i++;
  }
}
const queries = real ? real.queries : [...rows(COUNT, COUNT + QUERIES)].map((row) => row.vector);
/** Where the vectors of the 1 % update start in the stream. */
const UPDATE_FROM = real ? COUNT : COUNT + QUERIES;

const seconds = (ms: number) => Math.round(ms / 100) / 10;
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
function dirSizes(dir: string): Record<string, number> {
  return Object.fromEntries(readdirSync(dir).map((name) => [name, mb(statSync(join(dir, name)).size)]));
}
function percentiles(samples: number[]): { p50: number; p95: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 100) / 100;
  return { p50: at(0.5), p95: at(0.95) };
}
function mask(fraction: number, seed: number): { eligible: Uint8Array; count: number } {
  const random = uniform(seed);
  const eligible = new Uint8Array(COUNT + 1);
  let count = 0;
  for (let rowid = 1; rowid <= COUNT; rowid++) if (random() < fraction) (eligible[rowid] = 1), count++;
  return { eligible, count };
}
function latency(segment: VectorSegment, limit: number, filter: { eligible: Uint8Array; count: number } | null) {
  const samples: number[] = [];
  let short = 0;
  for (let i = 0; i < SEARCHES; i++) {
    const started = performance.now();
    const hits = segment.search(queries[i % QUERIES], filter?.eligible ?? null, filter?.count ?? COUNT, limit);
    samples.push(performance.now() - started);
    if (hits.length < Math.min(limit, filter?.count ?? COUNT)) short++;
  }
  return { ...percentiles(samples), short };
}

/** The exact top 10 of every query by float cosine: one pass over the vectors. */
function exactTop10(): number[][] {
  const best = queries.map(() => ({ rowids: [] as number[], scores: [] as number[] }));
  for (const { rowid, vector } of rows(0, COUNT)) {
    for (const [q, query] of queries.entries()) {
      let dot = 0;
      for (let d = 0; d < DIMENSION; d++) dot += vector[d] * query[d];
      const top = best[q];
      if (top.scores.length === 10 && dot <= top.scores[9]) continue;
      let at = top.scores.findIndex((score) => dot > score);
      if (at < 0) at = top.scores.length;
      top.scores.splice(at, 0, dot);
      top.rowids.splice(at, 0, rowid);
      top.scores.length = Math.min(top.scores.length, 10);
      top.rowids.length = Math.min(top.rowids.length, 10);
    }
  }
  return best.map((top) => top.rowids);
}
function recall(segment: VectorSegment, exact: number[][]): number {
  let found = 0;
  for (const [q, query] of queries.entries()) {
    const hits = segment.search(query, null, COUNT, 10);
    found += hits.filter((hit) => exact[q].includes(hit.rowid)).length;
  }
  return Math.round((found / (QUERIES * 10)) * 1000) / 1000;
}

let started = performance.now();
const fullDir = join(root, "full");
writeVectorSegment(fullDir, rows(0, COUNT), DIMENSION);
const buildSeconds = seconds(performance.now() - started);
const builderPeakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
console.log(`built ${COUNT} ${DATA} vectors in ${buildSeconds} s (peak RSS ${builderPeakRssMb} MB): ${JSON.stringify(dirSizes(fullDir))} MB`);

started = performance.now();
const segment = VectorSegment.open(fullDir, DIMENSION);
const openMs = Math.round(performance.now() - started);
const filters = { "1%": mask(0.01, 11), "10%": mask(0.1, 12) };
const latencies = {
  limit10: latency(segment, 10, null),
  limit100: latency(segment, 100, null),
  filtered1pct_limit10: latency(segment, 10, filters["1%"]),
  filtered1pct_limit100: latency(segment, 100, filters["1%"]),
  filtered10pct_limit10: latency(segment, 10, filters["10%"]),
  filtered10pct_limit100: latency(segment, 100, filters["10%"]),
};
console.log(`open ${openMs} ms; latency (ms):`, latencies);

const exact = exactTop10();
const byShare = Object.fromEntries(
  [0.005, 0.01, 0.02, 0.05, 0.1, 0.2].map((visitedShare) => {
    const tuned = VectorSegment.open(fullDir, DIMENSION, { visitedShare, minVisited: 0 });
    return [visitedShare, { recall10: recall(tuned, exact), ...latency(tuned, 10, null) }];
  }),
);
console.log(`recall@10 and latency by share scored (default ${SEARCH_TUNING.visitedShare}):`, byShare);

// An update of 1 %: every 100th chunk removed, as many new ones added.
const removed = Array.from({ length: COUNT / 100 }, (_, i) => 100 * i + 1);
// Generated first: the stream would otherwise produce every vector before them inside the timing.
const added = [...rows(UPDATE_FROM, UPDATE_FROM + COUNT / 100, COUNT + 1)];
started = performance.now();
const update = writeVectorSegment(join(root, "update"), added, DIMENSION, {
  segment,
  removed,
});
const incrementalSeconds = seconds(performance.now() - started);
console.log(`incremental update (1 % removed, 1 % added): ${incrementalSeconds} s vs ${buildSeconds} s for a full build`, update);

console.log(
  JSON.stringify({
    vectors: COUNT,
    data: DATA,
    buildSeconds,
    builderPeakRssMb,
    fileMb: dirSizes(fullDir),
    openMs,
    latencies,
    recall10: recall(segment, exact),
    byShare,
    incrementalSeconds,
  }),
);
if (!keep) rmSync(root, { recursive: true, force: true });
