// Ingestion throughput: pages/s and chunks/s per pipeline step and end to end for a 100-page PDF, a 1 MB
// text file, 50 small documents and 2,000 short ones uploaded at once (16 uploads in flight); peak memory
// (RSS; workers are threads of the same process); and GET latency while ingesting (a client polls the API
// throughout).
//
//   npm run bench:ingest
//
// Runs the real server in-process on a temp data dir with limits off and the configured embedder
// (QUARRY_WORKERS defaults to the core count). Text comes from the evaluation corpora in ../shared/eval.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";
import type { PipelineReport } from "../../src/ingest/pipeline.ts";
import { meteredPages } from "../../src/ingest/indexer.ts";

const EVAL_DIR = resolve(import.meta.dir, "../../../shared/eval");
const PDF_PAGES = 100;
const TEXT_BYTES = 1024 * 1024;
const SMALL_DOCS = 50;
/** Short documents in the queue scenario, each one chunk: the queue's and the pipeline's per-document costs. */
const SHORT_DOCS = 2_000;
const UPLOADS_IN_FLIGHT = 16;
const UNFINISHED = ["pending", "parsing", "chunking", "embedding"];

/** Abstracts from the evaluation corpora, as plain ASCII paragraphs (the PDF's standard font needs it). */
function paragraphs(): string[] {
  const out: string[] = [];
  for (const set of ["cisi", "cran", "med", "npl"]) {
    for (const line of readFileSync(join(EVAL_DIR, set, "corpus.jsonl"), "utf8").split("\n")) {
      if (!line.trim()) continue;
      const text = String(JSON.parse(line).text).replace(/[^\x20-\x7e]+/g, " ").replace(/\s+/g, " ").trim();
      if (text.length > 200) out.push(text);
    }
  }
  return out;
}

function textOfSize(source: string[], bytes: number, start = 0): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = start; size < bytes; i++) {
    const paragraph = source[i % source.length];
    parts.push(paragraph);
    size += paragraph.length + 2;
  }
  return parts.join("\n\n").slice(0, bytes);
}

/** A PDF of `pages` letter pages of 10-pt prose (~550 words each). */
async function pdfOfPages(source: string[], pages: number): Promise<Uint8Array<ArrayBuffer>> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const words = textOfSize(source, pages * 4000, 5000).split(/\s+/);
  let w = 0;
  for (let p = 0; p < pages; p++) {
    const page = pdf.addPage([612, 792]);
    page.drawText(`Section ${p + 1}`, { x: 50, y: 740, size: 16, font });
    for (let y = 710; y > 60; y -= 13) {
      let line = "";
      while (w < words.length && font.widthOfTextAtSize(`${line} ${words[w]}`, 10) < 510) line = line ? `${line} ${words[w++]}` : words[w++];
      page.drawText(line, { x: 50, y, size: 10, font });
    }
  }
  return new Uint8Array(await pdf.save());
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const dataDir = mkdtempSync(join(tmpdir(), "quarry-bench-ingest-"));
const config = loadConfig({ ...process.env, PORT: "0", QUARRY_HOST: "127.0.0.1", QUARRY_DATA_DIR: dataDir, QUARRY_LIMITS: "off" });
const server = await startServer(config);
const api = `${server.url}/api`;

async function call(method: string, path: string, token: string, body?: unknown, form?: FormData): Promise<any> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(api + path, { method, headers, body: form ?? (body === undefined ? undefined : JSON.stringify(body)) });
  return res.json();
}

const signup = await (await fetch(`${api}/auth/signup`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery" }),
})).json();
const token: string = signup.data.api_key;
const kbId: string = (await call("POST", "/v1/knowledge-bases", token, { name: "bench" })).data.id;
const docsPath = `/v1/knowledge-bases/${kbId}/documents`;

const reports = new Map<string, PipelineReport>();
server.ctx.ingest.onProcessed((report) => reports.set(report.documentId, report));

// Sampled every 50 ms: peak memory, and how late the timer fires (the HTTP thread's longest stall).
let peakRss = process.memoryUsage.rss();
let longestStallMs = 0;
let lastTick = performance.now();
const memoryTimer = setInterval(() => {
  const now = performance.now();
  longestStallMs = Math.max(longestStallMs, now - lastTick - 50);
  lastTick = now;
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 50);

interface Row {
  name: string;
  docs: number;
  pages: number;
  chunks: number;
  seconds: number;
  stages: Record<keyof PipelineReport["ms"], number>;
  getP50: number;
  getP95: number;
  getP99: number;
  gets: number;
  longestStallMs: number;
}

/** Uploads everything at once, polls GETs until all are done, and sums the workers' step timings. */
async function scenario(name: string, files: File[]): Promise<Row> {
  const started = performance.now();
  longestStallMs = 0;
  const ids: string[] = new Array(files.length);
  let next = 0;
  const upload = async () => {
    while (next < files.length) {
      const index = next++;
      const form = new FormData();
      form.append("file", files[index]);
      const res = await call("POST", docsPath, token, undefined, form);
      if (!res.data) throw new Error(`upload of ${files[index].name} failed: ${JSON.stringify(res)}`);
      ids[index] = res.data.id;
    }
  };
  await Promise.all(Array.from({ length: UPLOADS_IN_FLIGHT }, upload));
  const latencies: number[] = [];
  const timedGet = async (path: string) => {
    const t = performance.now();
    const body = await call("GET", path, token);
    latencies.push(performance.now() - t);
    return body;
  };
  // Every 50 ms: one document GET, and one list page per unfinished status. The earlier scenarios' documents
  // are all done, so the knowledge base having none unfinished means this scenario's are.
  for (let i = 0; ; i++) {
    await timedGet(`${docsPath}/${ids[i % ids.length]}`);
    let unfinished = false;
    for (const status of UNFINISHED) unfinished ||= (await timedGet(`${docsPath}?status=${status}&limit=1`)).data.length > 0;
    if (!unfinished) break;
    await Bun.sleep(50);
  }
  const failed = (await call("GET", `${docsPath}?status=failed&limit=1`, token)).data;
  if (failed.length > 0) throw new Error(`${failed[0].name} failed: ${failed[0].error_detail}`);
  const seconds = (performance.now() - started) / 1000;
  // Reports arrive just after the document is marked ready; give the last one a moment.
  while (ids.some((id) => !reports.has(id))) await Bun.sleep(5);
  const docs = await Promise.all(ids.map(async (id) => (await call("GET", `${docsPath}/${id}`, token)).data));
  const stages = { parse: 0, chunk: 0, embed: 0, index: 0 };
  for (const id of ids) for (const key of Object.keys(stages) as (keyof typeof stages)[]) stages[key] += reports.get(id)!.ms[key] / 1000;
  return {
    name,
    docs: ids.length,
    pages: docs.reduce((sum, d) => sum + meteredPages(d.page_count, d.file_size_bytes), 0),
    chunks: docs.reduce((sum, d) => sum + d.chunk_count, 0),
    seconds,
    stages,
    getP50: percentile(latencies, 50),
    getP95: percentile(latencies, 95),
    getP99: percentile(latencies, 99),
    gets: latencies.length,
    longestStallMs,
  };
}

const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(8);

try {
  const source = paragraphs();
  const pdf = await pdfOfPages(source, PDF_PAGES);
  const rows: Row[] = [];
  rows.push(await scenario(`${PDF_PAGES}-page PDF (${(pdf.byteLength / 1024).toFixed(0)} KB)`, [new File([pdf], "report.pdf")]));
  rows.push(await scenario("1 MB text file", [new File([textOfSize(source, TEXT_BYTES)], "corpus.txt")]));
  rows.push(
    await scenario(
      `${SMALL_DOCS} small documents at once`,
      Array.from({ length: SMALL_DOCS }, (_, i) => new File([textOfSize(source, 1500 + 100 * (i % 20), 200 + i * 7)], `note-${i}.txt`)),
    ),
  );
  rows.push(
    await scenario(
      `${SHORT_DOCS.toLocaleString("en")} short documents at once`,
      Array.from({ length: SHORT_DOCS }, (_, i) => new File([source[(1000 + i) % source.length].slice(0, 400)], `short-${i}.txt`)),
    ),
  );
  clearInterval(memoryTimer);

  const embedder = server.ctx.models.embedder;
  console.log(`Quarry ingestion benchmark — ${config.workers} workers, embedder ${embedder.id} (${embedder.dimension}-d, max ${embedder.maxTokens} tokens)`);
  console.log("Pages: PDF pages; text files one per 2,400 bytes (as metered). Step rates are per worker-second (summed over workers).\n");
  for (const row of rows) {
    console.log(`${row.name}: ${row.docs} document(s), ${row.pages} pages, ${row.chunks} chunks in ${row.seconds.toFixed(2)} s`);
    console.log(`  end to end   ${fmt(row.pages / row.seconds)} pages/s ${fmt(row.chunks / row.seconds)} chunks/s`);
    for (const [stage, secs] of Object.entries(row.stages)) {
      console.log(`  ${stage.padEnd(12)} ${fmt(row.pages / secs)} pages/s ${fmt(row.chunks / secs)} chunks/s   (${secs.toFixed(2)} s)`);
    }
    console.log(`  GET latency while ingesting: p50 ${row.getP50.toFixed(1)} ms, p95 ${row.getP95.toFixed(1)} ms, p99 ${row.getP99.toFixed(1)} ms (${row.gets} requests)`);
    console.log(`  longest stall of the HTTP thread: ${row.longestStallMs.toFixed(0)} ms\n`);
  }
  console.log(`Peak memory (RSS, server + workers): ${(peakRss / 1024 / 1024).toFixed(0)} MB`);
} finally {
  clearInterval(memoryTimer);
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
