// Everything route handlers need, built once at startup (see ../server.ts) and passed to each route group.
import type { Config } from "../config.ts";
import type { Db } from "../store/db.ts";
import type { Clock } from "../clock.ts";
import type { AccountService } from "../accounts/service.ts";
import type { FileStore } from "../store/files.ts";
import type { SearchModels } from "../models/types.ts";
import type { RateLimiter } from "./rate-limit.ts";
import type { RequestLogWriter } from "../store/request-log-writer.ts";
import type { Ingestion } from "../ingest/ingestion.ts";
import type { IndexCache } from "../search/index-cache.ts";
import type { QueryEmbeddingCache } from "../search/query-embeddings.ts";
import type { Deletions } from "../store/deletions.ts";
import type { Metrics } from "./metrics.ts";

export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  accounts: AccountService;
  files: FileStore;
  /** Deletes knowledge bases and documents a slice of rows at a time (knowledge bases in the background). */
  deletions: Deletions;
  models: SearchModels;
  /** The ingestion queue and its workers; routes wake it after queuing a document. */
  ingest: Ingestion;
  version: string;
  /** Per account (/v1). */
  rateLimiter: RateLimiter;
  /** Per client IP (/auth, /webhooks; see request-gate.ts). */
  clientRateLimiter: RateLimiter;
  /** Failed logins per email address (routes/auth.ts). */
  loginFailures: RateLimiter;
  requestLog: RequestLogWriter;
  /** The knowledge bases' search indexes and the worker that builds their segments. */
  searchIndexes: IndexCache;
  /** Query embeddings of recent searches, per knowledge base. */
  queryEmbeddings: QueryEmbeddingCache;
  /** What GET /api/metrics reports (routes/metrics.ts); null when metrics are off (no QUARRY_METRICS_TOKEN). */
  metrics: Metrics | null;
}
