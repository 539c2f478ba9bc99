// Prometheus metrics for GET /api/metrics (routes/metrics.ts): requests by route and status with their
// latency, searches by mode, documents processed and the time each pipeline step took, what is queued, the
// search indexes in memory, the database's size and the process's memory and CPU. prom-client keeps the
// series and writes the text format; its default Node.js collectors misreport under Bun (NaN event-loop
// lag, an 8 GB "heap"), so the process series are read here. It is imported only when metrics are on:
// loading it took ~42 ms, which every start would otherwise spend before listening.
import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { PipelineReport } from "../ingest/pipeline.ts";
import { PROCESSING_STATUSES } from "../store/documents.ts";
import type { StoreStats } from "../store/stats.ts";
import type { IndexCache } from "../search/index-cache.ts";

/** Request and search latency, in seconds: 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A pipeline step, in seconds: 10 ms to the hour a document may take. */
const STEP_BUCKETS = [0.01, 0.05, 0.25, 1, 5, 15, 60, 300, 900, 3600];
const STEPS = ["parse", "chunk", "embed", "index"] as const;

export interface MetricsSources {
  version: string;
  store(): StoreStats;
  indexes(): Pick<IndexCache, "loaded" | "memoryBytes" | "memoryBudgetBytes">;
}

type PromClient = typeof import("prom-client");

/** The metrics, with prom-client loaded for them. */
export async function createMetrics(sources: MetricsSources): Promise<Metrics> {
  return new Metrics(await import("prom-client"), sources);
}

export class Metrics {
  private readonly registry: Registry;
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly requestSeconds: Histogram<"method" | "route">;
  private readonly searchSeconds: Histogram<"mode">;
  private readonly documents: Counter<"outcome">;
  private readonly pages: Counter;
  private readonly chunks: Counter;
  private readonly stepSeconds: Histogram<"step">;
  private readonly cpuSeconds: Counter;
  private readonly gauges: Record<"processing" | "knowledgeBases" | "accounts" | "databaseBytes" | "freeBytes" | "indexesLoaded" | "indexBytes" | "indexBudget" | "rss", Gauge<string>>;
  private lastCpuSeconds = 0;

  constructor(
    { Counter, Gauge, Histogram, Registry }: PromClient,
    private readonly sources: MetricsSources,
  ) {
    this.registry = new Registry();
    const registers = [this.registry];
    new Gauge({ name: "quarry_build_info", help: "Always 1; the running version as a label", labelNames: ["version"], registers }).set({ version: sources.version }, 1);
    new Gauge({ name: "process_start_time_seconds", help: "When the server started, in seconds since the Unix epoch", registers }).set(
      Math.round(Date.now() / 1000 - process.uptime()),
    );
    this.requests = new Counter({ name: "quarry_http_requests_total", help: "API requests answered, by method, route and status", labelNames: ["method", "route", "status"], registers });
    this.requestSeconds = new Histogram({
      name: "quarry_http_request_duration_seconds",
      help: "Time from a request's arrival to its response, by method and route",
      labelNames: ["method", "route"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.searchSeconds = new Histogram({ name: "quarry_search_duration_seconds", help: "Searches answered, and the time each took, by mode", labelNames: ["mode"], buckets: LATENCY_BUCKETS, registers });
    this.documents = new Counter({
      name: "quarry_documents_processed_total",
      help: "Documents whose processing ended, by outcome (dropped/cancelled: deleted while processed)",
      labelNames: ["outcome"],
      registers,
    });
    this.pages = new Counter({
      name: "quarry_pages_parsed_total",
      help: "Pages of the documents that became ready (text formats have none; usage meters them by size)",
      registers,
    });
    this.chunks = new Counter({ name: "quarry_chunks_indexed_total", help: "Chunks of the documents that became ready", registers });
    this.stepSeconds = new Histogram({ name: "quarry_pipeline_step_duration_seconds", help: "Time a ready document's pipeline step took", labelNames: ["step"], buckets: STEP_BUCKETS, registers });
    this.cpuSeconds = new Counter({ name: "process_cpu_seconds_total", help: "CPU time of the server process, all threads, user and system", registers });
    const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers });
    this.gauges = {
      processing: gauge("quarry_documents_processing", "Documents queued or being processed, by status", ["status"]),
      knowledgeBases: gauge("quarry_knowledge_bases", "Knowledge bases"),
      accounts: gauge("quarry_accounts", "Accounts"),
      databaseBytes: gauge("quarry_database_size_bytes", "Size of quarry.db (without its WAL)"),
      freeBytes: gauge("quarry_database_free_bytes", "Part of quarry.db SQLite holds free for reuse"),
      indexesLoaded: gauge("quarry_search_indexes_loaded", "Knowledge bases whose search index is in memory"),
      indexBytes: gauge("quarry_search_index_memory_bytes", "Estimated memory of the in-memory parts of the search indexes"),
      indexBudget: gauge("quarry_search_index_memory_budget_bytes", "Memory budget of the in-memory parts of the search indexes (QUARRY_INDEX_MEMORY_MB)"),
      rss: gauge("process_resident_memory_bytes", "Resident memory of the server process"),
    };
    for (const status of PROCESSING_STATUSES) this.gauges.processing.set({ status }, 0);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** `route`: the route's pattern (/api/v1/knowledge-bases/:kb_id), never the path, so ids make no series. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.requestSeconds.observe({ method, route }, seconds);
  }

  observeSearch(mode: string, seconds: number): void {
    this.searchSeconds.observe({ mode }, seconds);
  }

  observeDocument(report: PipelineReport): void {
    this.documents.inc({ outcome: report.outcome });
    if (report.outcome !== "ready") return;
    this.pages.inc(report.pages ?? 0);
    this.chunks.inc(report.chunks);
    for (const step of STEPS) this.stepSeconds.observe({ step }, report.ms[step] / 1000);
  }

  /** The text exposition, with the store's and the process's gauges read now. */
  render(): Promise<string> {
    const store = this.sources.store();
    for (const status of PROCESSING_STATUSES) this.gauges.processing.set({ status }, store.processing[status]);
    this.gauges.knowledgeBases.set(store.knowledgeBases);
    this.gauges.accounts.set(store.accounts);
    this.gauges.databaseBytes.set(store.databaseBytes);
    this.gauges.freeBytes.set(store.freeBytes);
    const indexes = this.sources.indexes();
    this.gauges.indexesLoaded.set(indexes.loaded);
    this.gauges.indexBytes.set(indexes.memoryBytes);
    this.gauges.indexBudget.set(indexes.memoryBudgetBytes);
    this.gauges.rss.set(process.memoryUsage.rss());
    const { user, system } = process.cpuUsage();
    const cpuSeconds = (user + system) / 1e6;
    this.cpuSeconds.inc(Math.max(0, cpuSeconds - this.lastCpuSeconds));
    this.lastCpuSeconds = cpuSeconds;
    return this.registry.metrics();
  }
}
