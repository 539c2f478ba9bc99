// Runs the ingestion queue: on start, every document left unfinished by a stop or crash is queued again
// from the beginning; then a pool of workers takes jobs, taking turns between accounts (queue.ts). A
// document deleted while processed has its job cancelled. Lives on the HTTP thread, where it only does
// small database reads and writes; all heavy work happens in the workers and their parser processes.
import { cpuCount } from "../cpu-count.ts";
import type { Config } from "../config.ts";
import type { Clock } from "../clock.ts";
import type { Db } from "../store/db.ts";
import { LOCKED, tryWriteTx, writeTx } from "../store/db.ts";
import { resetToPending, unfinishedDocumentIds } from "../store/documents.ts";
import { MAX_ATTEMPTS, attemptsOf, claimNext, existingJobs, hasQueuedJob, requeue, requeueAll } from "./queue.ts";
import { failDocument, failDocumentInSlices } from "./indexer.ts";
import { BUSY, WorkerPool, type JobSource } from "./pool.ts";
import type { PipelineReport } from "./pipeline.ts";
import type { JobPayload, WorkerSettings } from "./worker.ts";

/** Longest a single document may take (a 500-page scan needs ~25 minutes of OCR on one core). */
const JOB_TIMEOUT_MS = 60 * 60 * 1000;

export interface IngestionOptions {
  db: Db;
  databasePath: string;
  config: Config;
  clock: Clock;
  /** The operator's log: each document's outcome, retries and recovery at start (names and ids, never content). */
  log?: (line: string) => void;
}

/** How often a crash that could not be recorded is tried again. */
const CRASH_RECORD_RETRY_MS = 5_000;

export class Ingestion implements JobSource<PipelineReport> {
  private pool: WorkerPool<PipelineReport> | null = null;
  private readonly listeners = new Set<(report: PipelineReport) => void>();
  /** Documents whose crash could not be recorded yet (see crashed). */
  private readonly unrecorded = new Set<string>();

  private readonly log: (line: string) => void;

  constructor(private readonly options: IngestionOptions) {
    this.log = options.log ?? (() => {});
  }

  start(): void {
    this.recoverUnfinished();
    const { config, databasePath } = this.options;
    const settings: WorkerSettings = {
      config,
      databasePath,
      threads: Math.max(1, Math.floor(cpuCount() / config.workers)),
    };
    this.pool = new WorkerPool<PipelineReport>({
      size: config.workers,
      workerUrl: new URL("./worker.ts", import.meta.url).href,
      settings,
      source: this,
      jobTimeoutMs: JOB_TIMEOUT_MS,
    });
    this.pool.start();
  }

  /**
   * Call after queuing a document so an idle worker picks it up at once, and after deleting documents so
   * their running jobs are cancelled at once (otherwise both happen at the workers' next poll, within a second).
   */
  wake(): void {
    this.pool?.wake();
  }

  async stop(): Promise<void> {
    await this.pool?.stop();
    this.pool = null;
  }

  /** Reports each processed document (outcome, pages, chunks, time per step); returns an unsubscribe. */
  onProcessed(listener: (report: PipelineReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  hasWork(): boolean {
    return hasQueuedJob(this.options.db);
  }

  /** Runs on the HTTP thread, so it does not wait for a worker's write lock: the pool tries again shortly. */
  claim(): { id: string; payload: JobPayload } | null | typeof BUSY {
    const { db, clock } = this.options;
    if (!hasQueuedJob(db)) return null;
    const documentId = tryWriteTx(db, () => claimNext(db, clock.now()));
    if (documentId === LOCKED) return BUSY;
    if (!documentId) return null;
    return { id: documentId, payload: { clockOffsetMs: clock.now().getTime() - Date.now() } };
  }

  withdrawn(ids: string[]): string[] {
    const existing = existingJobs(this.options.db, ids);
    return ids.filter((id) => !existing.has(id));
  }

  finished(_id: string, report: PipelineReport): void {
    this.log(describeReport(report));
    for (const listener of this.listeners) listener(report);
  }

  /**
   * Resolves once a document that failed is marked so (the pool does not wait for it); never rejects. When
   * that cannot be written (a full disk), it is tried again every few seconds while the server runs: the
   * document would otherwise keep its processing status, refusing a replacement, until the next start.
   */
  async crashed(id: string, reason: string, retry: boolean): Promise<void> {
    try {
      await this.retryOrFail(id, reason, retry);
      this.unrecorded.delete(id);
    } catch (error) {
      if (!this.pool) return; // stopped: the next start's recovery takes it
      if (!this.unrecorded.has(id)) {
        console.error(`Ingestion of ${id}: its crash could not be recorded (${(error as Error).message}); tried again every ${CRASH_RECORD_RETRY_MS / 1000} s`);
      }
      this.unrecorded.add(id);
      setTimeout(() => void this.crashed(id, reason, retry), CRASH_RECORD_RETRY_MS);
    }
  }

  private async retryOrFail(id: string, reason: string, retry: boolean): Promise<void> {
    const { db, clock } = this.options;
    const detail = writeTx(db, (): string | null => {
      const attempts = attemptsOf(db, id);
      if (attempts === null) return null; // deleted meanwhile
      if (retry && attempts < MAX_ATTEMPTS) {
        requeue(db, id, false);
        resetToPending(db, id, clock.now());
        this.log(`ingest ${id}: ${reason}; queued again (attempt ${attempts + 1} of ${MAX_ATTEMPTS})`);
        return null;
      }
      return retry ? `${reason}; processing was attempted ${attempts} times. The file may be malformed or too complex to process.` : reason;
    });
    // Its job stays claimed meanwhile; a stop before the end leaves it to the next start's recovery.
    const failed = detail === null ? null : await failDocumentInSlices(db, id, detail, clock.now());
    // Reported like a document that failed in its worker: the same log line, and the listeners (metrics) hear of it.
    if (failed) {
      const ms = { parse: 0, chunk: 0, embed: 0, index: 0 };
      this.finished(id, { documentId: id, kbId: failed.kb_id, outcome: "failed", errorDetail: detail!, pages: null, chunks: 0, ms });
    }
  }

  abandoned(id: string): void {
    const { db, clock } = this.options;
    writeTx(db, () => {
      if (attemptsOf(db, id) === null) return;
      requeue(db, id, true);
      resetToPending(db, id, clock.now());
    });
  }

  /**
   * Nothing runs before start, so every unfinished document goes back to pending with a queued job. One
   * whose processing was cut short MAX_ATTEMPTS times (say the file crashes the whole server) fails.
   */
  private recoverUnfinished(): void {
    const { db, clock } = this.options;
    const failed = writeTx(db, () => {
      const ids = unfinishedDocumentIds(db);
      requeueAll(db, ids, clock.now());
      const failedIds: string[] = [];
      for (const id of ids) {
        if ((attemptsOf(db, id) ?? 0) >= MAX_ATTEMPTS) {
          failDocument(
            db,
            id,
            `Processing was interrupted ${MAX_ATTEMPTS} times (the server stopped while processing this document). The file may be malformed or too complex to process.`,
            clock.now(),
          );
          failedIds.push(id);
        } else {
          resetToPending(db, id, clock.now());
        }
      }
      if (ids.length > failedIds.length) this.log(`ingest: ${counted(ids.length - failedIds.length, "unfinished document")} queued again`);
      return failedIds;
    });
    for (const id of failed) this.log(`ingest ${id}: failed: interrupted ${MAX_ATTEMPTS} times`);
  }
}

/** "1 page", "3 pages", "no pages" (null: a text format, which has none). */
function counted(n: number | null | undefined, word: string): string {
  return `${n ?? "no"} ${word}${n === 1 ? "" : "s"}`;
}

/** One line for the operator's log. */
function describeReport(report: PipelineReport): string {
  const where = `ingest ${report.documentId}${report.kbId ? ` in ${report.kbId}` : ""}`;
  const seconds = (Object.values(report.ms).reduce((sum, ms) => sum + ms, 0) / 1000).toFixed(1);
  if (report.outcome === "ready") return `${where}: ready, ${counted(report.pages, "page")}, ${counted(report.chunks, "chunk")}, ${seconds} s`;
  if (report.outcome === "failed") return `${where}: failed: ${report.errorDetail}`;
  return `${where}: deleted while processing`;
}
