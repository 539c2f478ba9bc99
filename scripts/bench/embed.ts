// Embedding throughput: chunks/s for ~300-token chunks at batch sizes 1/8/32, and ms per single query
// embedding, with 1 and 2 intra-op threads, for every model folder found.
//
//   npm run bench:embed                 models in <repo>/models and $QUARRY_MODELS_DIR
//   bun scripts/bench/embed.ts DIR...   the given model folders
//
// Text comes from the evaluation corpora in ../shared/eval/*/ (relative to the repo).
// BENCH_CHUNKS (default 64) and BENCH_QUERIES (default 40) set the amount of work per row.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { OnnxEmbedder } from "../../src/models/onnx-embedder.ts";
import { findOnnxModel } from "../../src/models/model-folder.ts";
import { BUILT_IN_MODELS_DIR } from "../../src/models/load.ts";

const EVAL_DIR = resolve(import.meta.dir, "../../../shared/eval");
const CHUNK_WORDS = 230; // ≈ 300 WordPiece tokens of English prose
const BATCH_SIZES = [1, 8, 32];
const THREADS = [1, 2];
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 64);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 40);

function readJsonl(path: string): { text: string }[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
}

function evalFiles(name: string): string[] {
  if (!existsSync(EVAL_DIR)) throw new Error(`No evaluation corpora at ${EVAL_DIR} (expected ../shared/eval/ beside the repo)`);
  return readdirSync(EVAL_DIR)
    .sort()
    .map((set) => join(EVAL_DIR, set, name))
    .filter(existsSync);
}

/** Consecutive documents of all corpora, cut into chunks of CHUNK_WORDS words. */
function benchChunks(): string[] {
  const words: string[] = [];
  for (const file of evalFiles("corpus.jsonl")) {
    for (const doc of readJsonl(file)) {
      words.push(...doc.text.split(/\s+/).filter(Boolean));
      if (words.length >= CHUNKS * CHUNK_WORDS) break;
    }
    if (words.length >= CHUNKS * CHUNK_WORDS) break;
  }
  return Array.from({ length: CHUNKS }, (_, i) => words.slice(i * CHUNK_WORDS, (i + 1) * CHUNK_WORDS).join(" "));
}

function benchQueries(): string[] {
  return evalFiles("queries.jsonl")
    .flatMap((file) => readJsonl(file).slice(0, QUERIES))
    .map((q) => q.text)
    .slice(0, QUERIES);
}

function modelFolders(): string[] {
  const explicit = process.argv.slice(2);
  if (explicit.length > 0) return explicit.map((dir) => resolve(dir));
  if (!existsSync(join(BUILT_IN_MODELS_DIR, "use-lite"))) {
    console.log(`Skipping use-lite: ${join(BUILT_IN_MODELS_DIR, "use-lite")} does not exist yet (it is generated at install time).`);
  }
  const roots = [BUILT_IN_MODELS_DIR, process.env.QUARRY_MODELS_DIR].filter((d): d is string => !!d && existsSync(d));
  const folders = roots.flatMap((root) => readdirSync(root).map((name) => join(root, name)));
  return [...new Set(folders)].filter((dir) => {
    try {
      findOnnxModel(dir);
      return true;
    } catch {
      return false;
    }
  });
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const pad = (cells: (string | number)[], widths: number[]) => cells.map((c, i) => String(c).padEnd(widths[i])).join("  ");

async function benchModel(dir: string, chunks: string[], queries: string[]): Promise<void> {
  for (const threads of THREADS) {
    const embedder = await OnnxEmbedder.load(dir, { threads });
    try {
      const counts = chunks.map((c) => embedder.countTokens(c));
      // Tokens per chunk as written → as seen by the model after truncation to maxTokens.
      const tokens = `${mean(counts).toFixed(0)}→${mean(counts.map((n) => Math.min(n, embedder.maxTokens))).toFixed(0)}`;
      await embedder.embed(chunks.slice(0, 2), "passage"); // warm-up
      for (const batch of BATCH_SIZES) {
        const started = performance.now();
        for (let i = 0; i < chunks.length; i += batch) await embedder.embed(chunks.slice(i, i + batch), "passage");
        const seconds = (performance.now() - started) / 1000;
        const row = [embedder.id, threads, batch, (chunks.length / seconds).toFixed(1), ((seconds * 1000) / chunks.length).toFixed(1), tokens];
        console.log(pad(row, WIDTHS));
      }
      const latencies: number[] = [];
      for (const query of queries) {
        const started = performance.now();
        await embedder.embed([query], "query");
        latencies.push(performance.now() - started);
      }
      console.log(pad([embedder.id, threads, "query", "", `${median(latencies).toFixed(2)} p50`, `${mean(latencies).toFixed(2)} mean`], WIDTHS));
    } finally {
      await embedder.close();
    }
  }
}

const WIDTHS = [24, 7, 6, 9, 12, 12];

const folders = modelFolders();
if (folders.length === 0) {
  console.log("No model folders to benchmark.");
} else {
  const chunks = benchChunks();
  const queries = benchQueries();
  console.log(`${chunks.length} chunks of ${CHUNK_WORDS} words; ${queries.length} queries\n`);
  console.log(pad(["model", "threads", "batch", "chunks/s", "ms/chunk", "tokens/chunk"], WIDTHS));
  for (const dir of folders) await benchModel(dir, chunks, queries);
}
