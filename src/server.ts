// Starts Quarry: opens the database, loads the models, starts the background work and the HTTP server.
import { chmodSync, mkdirSync } from "node:fs";
import type { Config } from "./config.ts";
import { systemClock, type Clock } from "./clock.ts";
import { Checkpointer } from "./store/checkpointer.ts";
import { openDatabase, closeDatabase, type Db } from "./store/db.ts";
import { databasePathIn } from "./store/database-file.ts";
import { ensureVectorTable } from "./store/vectors.ts";
import { VectorPurger } from "./store/vector-purger.ts";
import { Deletions } from "./store/deletions.ts";
import { FileStore } from "./store/files.ts";
import { sweepFilesInBackground, type BackgroundFileSweep } from "./store/background-file-sweep.ts";
import type { SweepResult } from "./store/file-sweep.ts";
import { lockDataDir } from "./store/data-dir-lock.ts";
import { removeOtherRuntimes } from "./runtime/index.ts";
import { AccountService } from "./accounts/service.ts";
import { JwtIssuer } from "./accounts/jwt.ts";
import { resolveJwtSecret } from "./accounts/jwt-secret.ts";
import { loadServerModels } from "./models/server-models.ts";
import type { SearchModels } from "./models/types.ts";
import { Ingestion } from "./ingest/ingestion.ts";
import type { AppContext } from "./http/context.ts";
import { createApp } from "./http/app.ts";
import { uncaughtErrorResponse } from "./http/errors.ts";
import { RateLimiter } from "./http/rate-limit.ts";
import { MAX_TRACKED_CLIENTS } from "./http/request-gate.ts";
import { IndexCache } from "./search/index-cache.ts";
import { SegmentSearcher } from "./search/segment-searcher.ts";
import { recoverSearchIndexes } from "./search/index-recovery.ts";
import { readDocumentCounts } from "./search/kb-documents.ts";
import { QueryEmbeddingCache } from "./search/query-embeddings.ts";
import { createMetrics } from "./http/metrics.ts";
import { storeStats } from "./store/stats.ts";
import { RequestLogWriter } from "./store/request-log-writer.ts";
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;

export interface RunningServer {
  url: string;
  port: number;
  ctx: AppContext;
  /** The sweep of stored files no document refers to, which runs after the start (store/file-sweep.ts); null if stopped first. */
  filesSwept: Promise<SweepResult | null>;
  /** Graceful stop: no new connections, in-flight requests finish, background work stops, WAL checkpointed. */
  /** Resolves with the number of requests still in flight when the grace period ended, which were cut off. */
  stop(): Promise<number>;
}

export interface StartOptions {
  clock?: Clock;
  /** The operator's log: the startup banner, then documents processed and recovery (the CLI prints it; tests don't). */
  log?: (line: string) => void;
  /** Monotonic milliseconds for the rate limiter (default performance.now; tests may freeze it). */
  rateLimitClock?: () => number;
  /** How long a stop lets requests in flight finish before closing their connections (default STOP_GRACE_MS). */
  stopGraceMs?: number;
  /** How long changes stay unfolded into a segment once they stop coming (default: search/index-cache.ts). */
  segmentQuietMs?: number;
  /** The models (models/server-models.ts), already loading: started before this module was imported. */
  models?: Promise<SearchModels>;
}

/**
 * A stop waits this long for requests in flight, then closes what is left (a client that stalls mid-upload
 * would otherwise hold it forever), leaving time for the rest of a container's usual 10 s stop timeout.
 */
const STOP_GRACE_MS = 5_000;
/**
 * The HTTP thread's SQLite page cache. Every search reads its results' chunk and document rows, at random
 * places of a table that outgrows SQLite's default cache (2,000 KiB): at 1M chunks, 10 random rows took
 * 0.98 ms with it (its B-tree's inner pages read again for each row), 0.26 with 32 MB and 0.23 with 64 MB.
 * In WAL mode a commit by another connection (an ingestion or index worker) empties it, so while documents
 * are being ingested it helps less (a reviewer's 300k-row test: 1.0 µs a row warm, 2.4 after such a commit).
 */
const REQUEST_CACHE_MB = 32;
/** Startup time spent reading knowledge bases' document counts ahead of their first search, while the models load. */
const DOCUMENT_COUNTS_BUDGET_MS = 200;

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const startedAtMs = Date.now();
  // Whatever Quarry creates from here on (database, uploads, secrets) is readable by its user only.
  process.umask(0o077);
  mkdirSync(config.dataDir, { recursive: true });
  try {
    chmodSync(config.dataDir, 0o700);
  } catch (error) {
    // a data dir owned by another user (a mounted volume): what Quarry creates in it is still private
    console.warn(`quarry: could not make ${config.dataDir} private (0700): ${(error as Error).message}`);
  }
  const databasePath = databasePathIn(config.dataDir);
  // The models load (~0.3 s) while the database is opened and checked and the app built here; the CLI
  // starts them sooner.
  const modelsLoading = options.models ?? loadServerModels(config);
  const closeModels = async (loaded: SearchModels) => {
    await loaded.embedder.close();
    await loaded.reranker?.close();
  };
  let releaseDataDir = () => {};
  let searcher: SegmentSearcher | null = null;
  let db: Db;
  let jwtSecret: string;
  try {
    releaseDataDir = lockDataDir(config.dataDir);
    jwtSecret = resolveJwtSecret(config.jwtSecret, config.dataDir);
    await removeOtherRuntimes(config.dataDir);
    // The search threads load their modules (~0.2 s of CPU each) while the models load too. Started just
    // before listening (with the index cache), they took the cores from the first requests: at 1M chunks
    // the first /api/health after a start took 24-65 ms, 18-34 ms with them started here.
    searcher = new SegmentSearcher(config.dataDir);
    searcher.start();
    db = openDatabase(databasePath, { cacheMb: REQUEST_CACHE_MB });
  } catch (error) {
    await modelsLoading.then(closeModels, () => {});
    searcher?.stop();
    releaseDataDir();
    throw error;
  }
  const clock = options.clock ?? systemClock;
  const log = options.log ?? (() => {});
  const ingest = new Ingestion({ db, databasePath, config, clock, log });
  const checkpointer = new Checkpointer(databasePath);
  const vectorPurger = new VectorPurger(db);
  const files = new FileStore(config.dataDir);
  // Set once the models have loaded. The app is built while they load (~0.1 s of the HTTP thread, which
  // came after them before; at 1M chunks, three alternating rounds of three restarts: listening 0.85-0.98
  // -> 0.77-0.88 s after the spawn), and nothing reads these two before it listens.
  let models: SearchModels;
  let searchIndexes: IndexCache;
  let ctx: AppContext;
  let app: ReturnType<typeof createApp>;
  try {
    recoverSearchIndexes(db, config.dataDir);
    ctx = {
      config,
      db,
      clock,
      get models() {
        return models;
      },
      ingest,
      version: VERSION,
      files,
      deletions: new Deletions(db, files),
      accounts: new AccountService(db, new JwtIssuer(jwtSecret), clock),
      rateLimiter: new RateLimiter(options.rateLimitClock),
      clientRateLimiter: new RateLimiter(options.rateLimitClock, MAX_TRACKED_CLIENTS),
      loginFailures: new RateLimiter(options.rateLimitClock, MAX_TRACKED_CLIENTS),
      requestLog: new RequestLogWriter(db, clock),
      get searchIndexes() {
        return searchIndexes;
      },
      queryEmbeddings: new QueryEmbeddingCache(config.queryCacheEntries),
      metrics: config.metricsToken === null
        ? null
        : await createMetrics({
            version: VERSION,
            store: () => storeStats(db),
            indexes: () => searchIndexes,
          }),
    };
    app = createApp(ctx);
    readDocumentCounts(db, DOCUMENT_COUNTS_BUDGET_MS);
    models = await modelsLoading;
    ensureVectorTable(db, { id: models.embedder.id, dimension: models.embedder.dimension }, log);
  } catch (error) {
    await modelsLoading.then(closeModels, () => {});
    searcher.stop();
    closeDatabase(db);
    releaseDataDir();
    throw error;
  }
  searchIndexes = new IndexCache({
    db,
    dataDir: config.dataDir,
    databasePath,
    dimension: models.embedder.dimension,
    memoryBudgetBytes: config.indexMemoryMb * 1024 * 1024,
    segmentMinChanges: config.segmentMinChanges,
    segmentQuietMs: options.segmentQuietMs,
    searcher,
  });
  // A document's chunks go into its knowledge base's index as soon as it is ready, not at the next search.
  const stopWarming = ingest.onProcessed((report) => {
    if (report.outcome === "ready" && report.kbId) searchIndexes.warm(report.kbId);
    ctx.metrics?.observeDocument(report);
  });

  let fileSweep: BackgroundFileSweep | null = null;
  /** Everything but the HTTP server: background work, models, database. */
  const closeBackground = async () => {
    await fileSweep?.stop();
    stopWarming();
    await ctx.requestLog.stop();
    await ctx.deletions.stop();
    vectorPurger.stop();
    await ctx.searchIndexes.stop();
    await ingest.stop();
    await checkpointer.stop();
    await closeModels(models);
    closeDatabase(db);
    releaseDataDir();
  };

  ingest.start();
  checkpointer.start();
  vectorPurger.start();
  ctx.deletions.resume();
  ctx.requestLog.start();
  ctx.searchIndexes.start();
  try {
    // No cap of Bun's own: it answered a bare 413, with no envelope and before the credential check, to any
    // declared length over it. Every body is capped by http/body.ts instead: a declared length over its
    // route's cap gets our 400 before the body is read (Bun then reads what is sent and drops it: 1.5 GB
    // took 0.7 s and no memory), a chunked one is counted as it is read and cut off there. reusePort off (Elysia turns it on):
    // a second Quarry on a port already in use must fail, not silently share the traffic. Development mode
    // off whatever NODE_ENV says: it answers an error that escapes every handler with Bun's debug page.
    app.listen({
      port: config.port,
      hostname: config.host,
      maxRequestBodySize: Infinity,
      reusePort: false,
      development: false,
      error: uncaughtErrorResponse,
    });
  } catch (error) {
    await closeBackground();
    throw new Error(`cannot listen on ${config.host}:${config.port}: ${(error as Error).message ?? error}`);
  }
  const server = app.server!;
  fileSweep = sweepFilesInBackground(config.dataDir, databasePath, startedAtMs);
  void fileSweep.done.then((swept) => {
    if (swept && swept.removedFiles > 0) log(`files: removed ${swept.removedFiles} no document refers to (left by a crash)`);
  });
  const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`; // IPv6 literals in brackets

  const embed = models.embedder;
  log(
    [
      `Quarry ${VERSION} listening on ${url}/api  (docs: ${url}/api/docs)`,
      `  dashboard  ${url}/dashboard`,
      `  database   ${databasePath}`,
      `  embedding  ${embed.id} (${embed.dimension}-d, max ${embed.maxTokens} tokens)`,
      `  reranker   ${models.reranker ? models.reranker.id : `none — ${models.description.reranking_hint ?? ""}`}`,
      `  models dir ${config.modelsDir}`,
      `  workers    ${config.workers}   limits ${config.limitsEnabled ? "on" : "off"}`,
      `  metrics    ${ctx.metrics ? `${url}/api/metrics (bearer QUARRY_METRICS_TOKEN)` : "off (set QUARRY_METRICS_TOKEN to serve /api/metrics)"}`,
    ].join("\n"),
  );

  let stopping: Promise<number> | null = null;
  return {
    url,
    port: server.port!,
    ctx,
    filesSwept: fileSweep.done,
    stop() {
      stopping ??= (async () => {
        let timer: Timer | undefined;
        const graceOver = new Promise<"grace over">((resolve) => (timer = setTimeout(resolve, options.stopGraceMs ?? STOP_GRACE_MS, "grace over")));
        let cutOff = 0;
        if ((await Promise.race([server.stop(false), graceOver])) === "grace over") {
          // Connections whose request has not fully arrived (an idle socket a browser opened ahead) are not counted.
          cutOff = server.pendingRequests;
          if (cutOff > 0) log(`stopping: ${cutOff === 1 ? "1 request" : `${cutOff} requests`} still in flight after ${(options.stopGraceMs ?? STOP_GRACE_MS) / 1000} s cut off`);
          await server.stop(true);
        }
        clearTimeout(timer);
        await closeBackground();
        return cutOff;
      })();
      return stopping;
    },
  };
}
