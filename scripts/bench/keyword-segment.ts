// Keyword segment on its own: build time, builder peak RSS and file size, open time, and single-thread
// search latency (p50/p95 over the evaluation queries, top 10 and top 100) of each strategy (MaxScore,
// summing every posting, and the plan that picks one), plus whether they returned the same chunks. Up to 200k chunks
// the in-memory index (exhaustive term-at-a-time, what searches used before segments) is timed too.
// Latency is given as wall time and as the process's CPU time per query: on a shared machine the
// latter is the steadier figure.
//
//   bun scripts/bench/keyword-segment.ts                 100k and 1M chunks
//   BENCH_SIZES=100000 bun scripts/bench/keyword-segment.ts
//   BENCH_DATA_DIR=/tmp/kw bun scripts/bench/keyword-segment.ts   keep the segments there and reuse them
//
// Chunks are ~90-word windows of the evaluation corpora (../shared/eval), as in bench:search. Each build
// runs in a child process so its peak RSS is the builder's own.
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { COLLECTIONS, loadCollection } from "./eval-collections.ts";
import { uniform } from "../seeded-random.ts";
import { KeywordIndex, KeywordSegment, queryTermWeights, writeKeywordSegment, type KeywordHit, type KeywordStats } from "../../src/search/keyword/index.ts";

const CHUNK_WORDS = 90;
const SIZES = (process.env.BENCH_SIZES ?? "100000,1000000").split(",").map(Number);
const IN_MEMORY_UP_TO = 200_000;

function* syntheticChunks(count: number): Generator<{ rowid: number; text: string }> {
  const words: string[] = [];
  for (const name of COLLECTIONS) for (const doc of loadCollection(name).corpus) for (const w of doc.text.split(/\s+/)) if (w) words.push(w);
  const random = uniform(count);
  for (let i = 0; i < count; i++) {
    const start = Math.floor(random() * (words.length - CHUNK_WORDS));
    yield { rowid: i + 1, text: words.slice(start, start + CHUNK_WORDS).join(" ") };
  }
}

function peakRssMb(): number {
  const line = readFileSync("/proc/self/status", "utf8").match(/VmHWM:\s+(\d+) kB/);
  return line ? Number(line[1]) / 1024 : NaN;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function build(dir: string, count: number): Promise<{ seconds: number; peakRssMb: number }> {
  const child = Bun.spawn([process.execPath, import.meta.path, "--build", dir, String(count)], { stdout: "pipe", stderr: "inherit" });
  const output = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`build failed: ${output}`);
  return JSON.parse(output.trim().split("\n").at(-1)!);
}

function inMemory(size: number): KeywordIndex {
  const index = new KeywordIndex();
  for (const chunk of syntheticChunks(size)) index.add(chunk.rowid, chunk.text);
  return index;
}

async function main() {
  const queries = COLLECTIONS.flatMap((name) => loadCollection(name).queries.map((q) => queryTermWeights(q.text))).filter((w) => w.size > 0);
  const results: Record<string, unknown>[] = [];
  for (const size of SIZES) {
    const keep = process.env.BENCH_DATA_DIR;
    const dir = keep ? join(keep, String(size)) : mkdtempSync(join(tmpdir(), "quarry-keyword-bench-"));
    try {
      const reuse = keep !== undefined && existsSync(join(dir, "keyword.seg"));
      if (keep) mkdirSync(dir, { recursive: true });
      const built = reuse ? { seconds: NaN, peakRssMb: NaN } : await build(dir, size);
      const bytes = statSync(join(dir, "keyword.seg")).size;
      let started = performance.now();
      const segment = KeywordSegment.open(dir);
      const openMs = performance.now() - started;
      const stats: KeywordStats = {
        chunkCount: segment.chunkCount,
        averageLength: segment.totalLength / segment.chunkCount,
        documentFrequency: (term) => segment.documentFrequency(term),
      };
      const row: Record<string, unknown> = { chunks: size, build_s: +built.seconds.toFixed(1), builder_peak_rss_mb: Math.round(built.peakRssMb), file_mb: +(bytes / 2 ** 20).toFixed(1), open_ms: +openMs.toFixed(2) };
      const memory = size <= IN_MEMORY_UP_TO ? inMemory(size) : null;
      for (const limit of [10, 100]) {
        const variants: [string, (weights: Map<string, number>) => KeywordHit[]][] = [
          ["max_score", (weights) => segment.search(weights, stats, null, limit, { strategy: "max-score" })],
          ["dense_sum", (weights) => segment.search(weights, stats, null, limit, { strategy: "dense-sum" })],
          ["planned", (weights) => segment.search(weights, stats, null, limit)],
        ];
        if (memory) variants.push(["in_memory", (weights) => memory.search(weights, memory, null, limit)]);
        for (const [name, search] of variants) {
          for (const weights of queries.slice(0, 20)) search(weights); // warm-up
          const wall: number[] = [];
          const cpu: number[] = [];
          for (const weights of queries) {
            const cpuStart = process.cpuUsage().user;
            started = performance.now();
            search(weights);
            wall.push(performance.now() - started);
            cpu.push((process.cpuUsage().user - cpuStart) / 1000);
          }
          for (const [kind, times] of [["wall", wall], ["cpu", cpu]] as const) {
            times.sort((a, b) => a - b);
            row[`${name}_top${limit}_${kind}_p50_ms`] = +percentile(times, 50).toFixed(2);
            row[`${name}_top${limit}_${kind}_p95_ms`] = +percentile(times, 95).toFixed(2);
          }
        }
        row[`max_score_top${limit}_score_mismatches`] = queries.filter((weights) => {
          const pruned = segment.search(weights, stats, null, limit, { strategy: "max-score" });
          const summed = segment.search(weights, stats, null, limit, { strategy: "dense-sum" });
          return pruned.length !== summed.length || pruned.some((hit, i) => Math.abs(hit.score - summed[i].score) > 1e-9);
        }).length;
      }
      console.error(row);
      results.push(row);
    } finally {
      if (!keep) rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(JSON.stringify({ queries: queries.length, results }));
}

if (process.argv[2] === "--build") {
  const started = performance.now();
  writeKeywordSegment(process.argv[3], syntheticChunks(Number(process.argv[4])));
  console.log(JSON.stringify({ seconds: (performance.now() - started) / 1000, peakRssMb: peakRssMb() }));
} else await main();
