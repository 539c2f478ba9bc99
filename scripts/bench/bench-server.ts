// What the HTTP benchmarks share: the real server as its own process on a data dir, JSON calls to it,
// latency percentiles, and the synthetic knowledge bases they search (written straight into the database:
// embedding 100k+ chunks with the default model would take hours on 2 cores, and latency does not depend
// on where chunks came from).
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { COLLECTIONS, loadCollection } from "./eval-collections.ts";
import { uniform } from "../seeded-random.ts";

export const ROOT = resolve(import.meta.dir, "../..");

export interface BenchServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `bun src/main.ts serve` on the data dir (limits off) and resolves once it listens. Query
 * embeddings are not kept (QUARRY_QUERY_CACHE_ENTRIES=0): every cell sends the same queries, and a cell
 * after the first would otherwise time searches that skip the model.
 */
export async function startServer(dataDir: string, env: Record<string, string> = {}): Promise<BenchServer> {
  const proc = Bun.spawn(["node_modules/.bin/bun", "src/main.ts", "serve"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", QUARRY_HOST: "127.0.0.1", QUARRY_DATA_DIR: dataDir, QUARRY_LIMITS: "off", QUARRY_QUERY_CACHE_ENTRIES: "0", ...env },
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
        pid: proc.pid,
        async stop() {
          proc.kill("SIGTERM");
          await proc.exited;
        },
      };
    }
  }
}

export async function call(url: string, path: string, body: unknown, token?: string) {
  const res = await fetch(url + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Resident and peak resident memory of a process, in MB (Linux). */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
  return { rssMb: Math.round(kb("VmRSS") / 1024), peakMb: Math.round(kb("VmHWM") / 1024) };
}

/** CPU time the process has used, all its threads, in ms (Linux; 10 ms steps). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const [utime, stime] = stat.slice(stat.lastIndexOf(")") + 2).split(" ").slice(11, 13).map(Number);
  return (utime + stime) * 10;
}

/**
 * Latencies of `requests` searches sent by `clients` concurrent clients; with `serverPid`, also the server's
 * CPU time a search (all its threads), which bounds what 8 clients can get on a machine's cores.
 */
export async function measureSearches(
  url: string,
  token: string,
  kbId: string,
  queries: string[],
  body: Record<string, unknown>,
  clients: number,
  requests: number,
  serverPid?: number,
) {
  const latencies: number[] = [];
  let next = 0;
  const cpuBefore = serverPid === undefined ? 0 : cpuMsOf(serverPid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < requests) {
        const query = queries[next++ % queries.length];
        const t = performance.now();
        await call(url, `/v1/knowledge-bases/${kbId}/search`, { ...body, query }, token);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const serverCpuMs = serverPid === undefined ? NaN : (cpuMsOf(serverPid) - cpuBefore) / latencies.length;
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((sum, ms) => sum + ms, 0) / latencies.length;
  return { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), mean, qps: latencies.length / seconds, serverCpuMs };
}

export function evalQueries(): string[] {
  return COLLECTIONS.flatMap((name) => loadCollection(name).queries.map((q) => q.text));
}

/** Any fixed seed: the order only has to be the same in every run. */
const LATENCY_ORDER_SEED = 459;

/**
 * The evaluation queries in a fixed shuffled order, for latency cells: consecutive (and concurrent)
 * requests mix the collections, as real traffic would. In collection order, a run's first 200 requests
 * were 56 % CISI, whose 46-116-term queries (the slowest keyword searches) then arrived back to back.
 */
export function latencyQueries(): string[] {
  const queries = evalQueries();
  const random = uniform(LATENCY_ORDER_SEED);
  for (let i = queries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [queries[i], queries[j]] = [queries[j], queries[i]];
  }
  return queries;
}

export function corpusWords(): string[] {
  const words: string[] = [];
  for (const name of COLLECTIONS) for (const doc of loadCollection(name).corpus) for (const w of doc.text.split(/\s+/)) if (w) words.push(w);
  return words;
}

export interface SyntheticKb {
  accountId: string;
  kbId: string;
  chunks: number;
  chunksPerDocument: number;
  chunkWords: number;
  /** The vector of the i-th chunk written (deterministic, so exact neighbours can be recomputed). */
  vector(i: number, dimension: number): Float32Array;
}

/**
 * Writes the knowledge base's ready documents and chunks straight into the server's database, in
 * transactions of 100 documents. Each document gets metadata {group: 0–99} (a 1 % filter is group = 7).
 * Triggers log every chunk for the search index, as real ingestion does.
 */
export function fillKnowledgeBase(dataDir: string, kb: SyntheticKb, words: string[], progress?: (written: number) => void): void {
  const db = new Database(join(dataDir, "quarry.db"));
  db.exec("PRAGMA busy_timeout = 10000");
  db.exec("PRAGMA journal_mode = WAL");
  db.loadExtension(getLoadablePath());
  const dimension = Number(db.query<{ value: string }, []>("SELECT value FROM settings WHERE key = 'embedding_dimension'").get()!.value);
  const now = new Date().toISOString();
  const addDocument = db.query(
    `INSERT INTO documents (id, kb_id, account_id, name, file_type, file_size_bytes, chunk_count, status, metadata, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'txt', 1, ?, 'ready', ?, ?, ?)`,
  );
  const setRange = db.query("UPDATE documents SET first_chunk_rowid = ?, last_chunk_rowid = ? WHERE id = ?");
  const addChunk = db.query<{ rowid: number }, (string | number)[]>(
    `INSERT INTO chunks (id, document_id, kb_id, chunk_index, text, start_page, end_page, token_count, created_at)
     VALUES (?, ?, ?, ?, ?, NULL, 1, 128, ?) RETURNING rowid`,
  );
  const addVector = db.query("INSERT INTO chunk_vectors (rowid, embedding) VALUES (?, ?)");
  const documents = Math.ceil(kb.chunks / kb.chunksPerDocument);
  let written = 0;
  const random = uniform(1);
  for (let first = 0; first < documents; first += 100) {
    db.transaction(() => {
      for (let d = first; d < Math.min(documents, first + 100); d++) {
        const docId = `doc_bench${kb.kbId.slice(3)}${d}`;
        addDocument.run(docId, kb.kbId, kb.accountId, `bench-${d}.txt`, kb.chunksPerDocument, JSON.stringify({ group: d % 100 }), now, now);
        let firstRowid = 0;
        let lastRowid = 0;
        for (let i = 0; i < kb.chunksPerDocument && written < kb.chunks; i++) {
          const start = Math.floor(random() * (words.length - kb.chunkWords));
          const { rowid } = addChunk.get(`chk_${docId.slice(4)}x${i}`, docId, kb.kbId, i, words.slice(start, start + kb.chunkWords).join(" "), now)!;
          addVector.run(rowid, kb.vector(written, dimension));
          firstRowid ||= rowid;
          lastRowid = rowid;
          written++;
        }
        setRange.run(firstRowid, lastRowid, docId);
      }
    }).immediate();
    progress?.(written);
  }
  db.close();
}

/** Milliseconds until the index worker has published a segment holding the whole knowledge base. */
export async function waitForSegment(dataDir: string, kbId: string, chunks: number, timeoutMs = 3_600_000): Promise<number> {
  const started = performance.now();
  const dir = join(dataDir, "indexes", kbId);
  while (performance.now() - started < timeoutMs) {
    if (existsSync(dir)) {
      for (const name of readdirSync(dir).filter((n) => /^\d+$/.test(n))) {
        const manifest = join(dir, name, "manifest.json");
        if (existsSync(manifest) && (await Bun.file(manifest).json()).chunkCount >= chunks) return performance.now() - started;
      }
    }
    await Bun.sleep(500);
  }
  throw new Error(`no segment of ${chunks} chunks for ${kbId} after ${timeoutMs} ms`);
}
