// Runs the generated cases against a real server process and collects what the pass criteria need:
// answers, crashes, peak memory of the server's process tree, the unrelated tenant's latencies, and how
// every uploaded document ended.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { FuzzCase, FuzzRequest, LiveIds } from "./case.ts";
import { bearer, newTenant, sendPolitely, type Target, type Tenant } from "./api.ts";
import { BackgroundTenant, type LatencySummary } from "./background.ts";
import { DocumentTracker, type DocumentOutcome } from "./documents.ts";
import { judge, type Problem } from "./evaluate.ts";
import { generateCases } from "./generators/index.ts";
import { WEBHOOK_SECRET } from "./generators/requests.ts";
import { ESCAPE_MARKER } from "./generators/uploads.ts";
import type { FuzzResponse } from "./http.ts";
import { ServerProcess, rssBytes } from "./server-process.ts";

export interface FuzzOptions {
  seed: number;
  count: number;
  /** Inflated size of the zip and stream bombs. */
  bombMegabytes: number;
  /** How long an uploaded document may take to end ready or failed. */
  documentBudgetMs: number;
  requestTimeoutMs: number;
  log: (line: string) => void;
}

export interface CaseResult {
  id: number;
  category: string;
  name: string;
  expect: string;
  status: number;
  errorCode?: string;
  /** When the case was sent (epoch ms) and how long its answer took. */
  at: number;
  ms: number;
  rateLimitRetries: number;
  problems: Problem[];
  request: string;
  response: string;
}

export interface FuzzRun {
  options: Omit<FuzzOptions, "log">;
  results: CaseResult[];
  crashes: { caseId: number | null; detail: string }[];
  healthyAfter: boolean;
  /** The server and its child processes together (a parse subprocess counts). */
  peakRssBytes: number;
  /** When the process tree peaked (epoch ms). */
  peakRssAt: number;
  /** The server process alone. */
  peakProcessRssBytes: number;
  background: LatencySummary;
  documents: DocumentOutcome[];
  leftoverFiles: string[];
  serverErrors: string[];
  attackerAccounts: number;
  /** Epoch ms. */
  startedAt: number;
  durationMs: number;
}

const SAMPLE_MS = 100;
/** A case waits out rate limits this long at most, then its 429 is the answer (per-IP limits on /auth can be slow to refill). */
const CASE_RATE_WAIT_MS = 20_000;

function printable(bytes: Uint8Array | string, max: number): string {
  const text = typeof bytes === "string" ? bytes : Buffer.from(bytes.subarray(0, max * 4)).toString("latin1");
  const cut = text.length > max ? `${text.slice(0, max)}…(${typeof bytes === "string" ? bytes.length : bytes.length} bytes)` : text;
  return cut.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

function describeRequest(request: FuzzRequest): string {
  const headers = Array.isArray(request.headers) ? request.headers : Object.entries(request.headers ?? {});
  const auth = request.credential.kind === "raw" ? `Authorization: ${printable(request.credential.value, 60)}` : `auth: ${request.credential.kind}`;
  const body = request.body === undefined ? "" : ` body: ${printable(request.body, 240)}`;
  return `${request.method} ${printable(request.path, 160)} [${auth}${headers.map(([k, v]) => `; ${k}: ${printable(v, 80)}`).join("")}]${body}`;
}

function describeResponse(response: FuzzResponse): string {
  if (response.status === 0) return `no answer (${response.error})`;
  return `${response.status} ${printable(response.text, 300)}`;
}

function authorizationFor(request: FuzzRequest, attacker: Tenant): string | undefined {
  switch (request.credential.kind) {
    case "api-key":
      return bearer(attacker.apiKey);
    case "jwt":
      return bearer(attacker.token);
    case "raw":
      return request.credential.value;
    case "none":
      return undefined;
  }
}

/** Files named with the escape marker outside the live documents: traversal escapes or orphans. */
function leftoverFiles(dataDir: string, livePaths: Set<string>): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: string[] = [];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry);
      let isDir = false;
      try {
        isDir = statSync(path).isDirectory();
      } catch {
        continue;
      }
      if (isDir && depth > 0) walk(path, depth - 1);
      else if (entry.includes(ESCAPE_MARKER) && !livePaths.has(relative(dataDir, path))) found.push(path);
    }
  };
  walk(dataDir, 10);
  for (const outside of [dirname(dataDir), tmpdir(), process.cwd()]) walk(outside, 0);
  return [...new Set(found)];
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzRun> {
  const started = Date.now();
  const log = (line: string) => options.log(`${((Date.now() - started) / 1000).toFixed(1)}s ${line}`);
  log(`generating ${options.count} cases (seed ${options.seed}, bombs inflate to ${options.bombMegabytes} MB)…`);
  const cases = await generateCases(options.seed, options.count, options.bombMegabytes);
  const dataDir = mkdtempSync(join(tmpdir(), "quarry-fuzz-"));
  const serverErrors: string[] = [];
  const server = new ServerProcess({
    dataDir,
    env: { QUARRY_WEBHOOK_SECRET: WEBHOOK_SECRET },
    onStderr: (line) => {
      if (serverErrors.length < 200) serverErrors.push(line.slice(0, 400));
    },
  });
  let peakRss = 0;
  let peakRssAt = 0;
  let peakProcessRss = 0;
  const sampler = setInterval(() => {
    if (!server.pid) return;
    const rss = rssBytes(server.pid);
    if (rss.tree > peakRss) [peakRss, peakRssAt] = [rss.tree, Date.now()];
    peakProcessRss = Math.max(peakProcessRss, rss.process);
  }, SAMPLE_MS);
  const target = (): Target => ({ host: server.host, timeoutMs: options.requestTimeoutMs });
  const crashes: FuzzRun["crashes"] = [];
  const results: CaseResult[] = [];
  const tracker = new DocumentTracker(target, options.documentBudgetMs);
  let background: BackgroundTenant | null = null;
  let attackerAccounts = 0;
  try {
    await server.start();
    log(`server pid ${server.pid} on ${server.baseUrl}, data in ${dataDir}`);
    const other = await newTenant(target(), "bystander");
    let attacker = await newTenant(target(), "attacker");
    attackerAccounts = 1;
    /** Every tenant made so far: an attacker replaced by a new trial account keeps its document (and file). */
    const tenants = [other, attacker];
    const ids = (): LiveIds => ({ kbId: attacker.kbId, docId: attacker.docId, otherKbId: other.kbId, otherDocId: other.docId });
    background = new BackgroundTenant(() => server.baseUrl, other.apiKey);
    background.start();
    log("tenants ready; sending cases");

    const restartIfDown = async (caseId: number | null) => {
      if (server.alive && (await server.healthy(10_000))) return;
      const state = server.alive ? "process alive but /api/health did not answer in 10 s" : `process exited (code ${server.exitCode}, signal ${server.exitSignal})`;
      const detail = `${state}, noticed ${caseId === null ? "after the last case" : `right after case ${caseId}`}`;
      crashes.push({ caseId, detail });
      log(`!! server down after case ${caseId}: ${detail}; restarting`);
      await server.stop();
      await server.start();
    };

    for (const fuzzCase of cases) {
      if (fuzzCase.createsDocument) await tracker.waitBelow(6); // a trial account holds 10 documents
      const result = await runCase(fuzzCase);
      results.push(result);
      if (result.status === 0 || !server.alive) await restartIfDown(fuzzCase.id);
      if (fuzzCase.id % 10 === 9) await tracker.sweep();
      if (fuzzCase.id % 50 === 49) log(`${fuzzCase.id + 1}/${cases.length} cases, ${tracker.open} documents processing, peak RSS ${Math.round(peakRss / 2 ** 20)} MB`);
    }
    log(`all cases sent; waiting for ${tracker.open} documents to end ready or failed…`);
    await tracker.drain();
    await restartIfDown(null);

    async function runCase(fuzzCase: FuzzCase): Promise<CaseResult> {
      const request = fuzzCase.build(ids());
      const at = Date.now();
      let { response, rateLimited } = await sendPolitely(target(), request, authorizationFor(request, attacker), CASE_RATE_WAIT_MS);
      const usageRefusal = response.status === 429 ? (response.json as any)?.error : undefined;
      if (fuzzCase.createsDocument && usageRefusal?.code === "USAGE_LIMIT_EXCEEDED") {
        // the trial's allowance ran out: free documents, or start over with a new trial account, and retry once
        if (usageRefusal.details?.resource === "documents") await tracker.waitBelow(0);
        else {
          attacker = await newTenant(target(), "attacker");
          attackerAccounts++;
          tenants.push(attacker);
        }
        const retryRequest = fuzzCase.build(ids());
        ({ response, rateLimited } = await sendPolitely(target(), retryRequest, authorizationFor(retryRequest, attacker), CASE_RATE_WAIT_MS));
      }
      await followUp(fuzzCase, request, response);
      return {
        id: fuzzCase.id,
        category: fuzzCase.category,
        name: fuzzCase.name,
        expect: fuzzCase.expect,
        status: response.status,
        errorCode: (response.json as any)?.error?.code,
        at,
        ms: Math.round(response.ms),
        rateLimitRetries: rateLimited,
        problems: judge(response, fuzzCase.expect),
        request: describeRequest(request),
        response: describeResponse(response),
      };
    }

    /** Tracks documents a case created and deletes knowledge bases it created. */
    async function followUp(fuzzCase: FuzzCase, request: FuzzRequest, response: FuzzResponse) {
      const id = (response.json as any)?.data?.id;
      if (response.status < 200 || response.status >= 300 || typeof id !== "string") return;
      const authorization = bearer(attacker.apiKey);
      if (id.startsWith("doc_") && (request.method === "POST" || request.method === "PUT")) {
        const kbId = (response.json as any).data.kb_id ?? attacker.kbId;
        tracker.track({ kbId, docId: id, caseId: fuzzCase.id, category: fuzzCase.category, caseName: fuzzCase.name, since: Date.now(), authorization, keep: id === attacker.docId });
      }
      if (id.startsWith("kb_") && request.method === "POST" && id !== attacker.kbId) {
        await sendPolitely(target(), { method: "DELETE", path: `/api/v1/knowledge-bases/${id}`, credential: { kind: "none" } }, authorization);
      }
    }

    const livePaths = new Set<string>();
    for (const tenant of tenants) {
      const { response } = await sendPolitely(target(), { method: "GET", path: `/api/v1/knowledge-bases/${tenant.kbId}/documents/${tenant.docId}`, credential: { kind: "none" } }, bearer(tenant.apiKey));
      const path = (response.json as any)?.data?.storage_path;
      if (path) livePaths.add(path);
    }
    const healthyAfter = server.alive && (await server.healthy(10_000));
    const summary = await background.stop();
    background = null;
    return {
      options: { seed: options.seed, count: options.count, bombMegabytes: options.bombMegabytes, documentBudgetMs: options.documentBudgetMs, requestTimeoutMs: options.requestTimeoutMs },
      results,
      crashes,
      healthyAfter,
      peakRssBytes: peakRss,
      peakRssAt,
      peakProcessRssBytes: peakProcessRss,
      background: summary,
      documents: tracker.outcomes,
      leftoverFiles: leftoverFiles(dataDir, livePaths),
      serverErrors,
      attackerAccounts,
      startedAt: started,
      durationMs: Date.now() - started,
    };
  } finally {
    clearInterval(sampler);
    await background?.stop();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
