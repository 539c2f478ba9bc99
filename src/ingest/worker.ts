// Entry point of an ingestion worker thread: its own database connection and embedder, one document at
// a time. Chunking, embedding and the index write happen here, off the HTTP thread; parsing and OCR of
// the untrusted file happen in this worker's parser process (parse-process.ts), under a memory limit.
import type { Config } from "../config.ts";
import type { Clock } from "../clock.ts";
import { openDatabase, type Db } from "../store/db.ts";
import { loadModels } from "../models/load.ts";
import { prepareRuntime } from "../runtime/index.ts";
import { runInBackground } from "../background-priority.ts";
import type { Embedder } from "../models/types.ts";
import { Cancelled, Interrupted, processDocument } from "./pipeline.ts";
import { ParseProcess, ParserKilled } from "./parse-process.ts";
import type { FromWorker, ToWorker } from "./worker-protocol.ts";

declare const self: Worker;

export interface WorkerSettings {
  config: Config;
  databasePath: string;
  /** ONNX Runtime threads for this worker's embedder, so the pool does not oversubscribe the cores. */
  threads: number;
}

export interface JobPayload {
  /** The server clock minus the wall clock when the job was handed out (non-zero only when tests move time). */
  clockOffsetMs: number;
}

/** Longest a parse may take (a 500-page scan needs ~25 minutes of OCR on one core); under the job's limit. */
const PARSE_TIMEOUT_MS = 45 * 60 * 1000;

let settings: WorkerSettings;
let resources: Promise<{ db: Db; embedder: Embedder }> | null = null;
let parser: ParseProcess | null = null;
/** The job being processed, with the controller that stops it (stop request or cancellation). */
let current: { id: string; abort: AbortController } | null = null;
let stopRequested = false;
/** Embedding batches handed to other workers, by request id, waiting for their vectors. */
const delegations = new Map<number, (vectors: Float32Array[] | null) => void>();
let lastRequestId = 0;

function post(message: FromWorker<unknown>): void {
  self.postMessage(message);
}

function offsetClock(offsetMs: number): Clock {
  return { now: () => new Date(Date.now() + offsetMs) };
}

async function init(message: { settings: unknown }): Promise<void> {
  // Before the parser process and the model's threads start, so that they inherit it.
  runInBackground();
  settings = message.settings as WorkerSettings;
  parser = new ParseProcess({
    memoryMb: settings.config.parseMemoryMb,
    timeoutMs: PARSE_TIMEOUT_MS,
    started: (pid) => post({ type: "parser-started", pid }),
  });
  resources = (async () => {
    const { config, databasePath, threads } = settings;
    await prepareRuntime(config.dataDir);
    parser!.warm();
    const models = await loadModels({ modelsDir: config.modelsDir, embedModel: config.embedModel, rerankModel: null, threads });
    return { db: openDatabase(databasePath, { migrate: false }), embedder: models.embedder };
  })();
  try {
    await resources;
    post({ type: "ready" });
  } catch (error) {
    post({ type: "init-failed", error: (error as Error).message });
    process.exit(1);
  }
}

async function runJob(id: string, payload: JobPayload): Promise<void> {
  const abort = new AbortController();
  current = { id, abort };
  try {
    const { db, embedder } = await resources!;
    const result = await processDocument(
      {
        db,
        embedder,
        dataDir: settings.config.dataDir,
        limitsEnabled: settings.config.limitsEnabled,
        clock: offsetClock(payload.clockOffsetMs),
        signal: abort.signal,
        parse: (path, fileType, fileName, signal, allowance) => parser!.parse(path, fileType, fileName, signal, allowance),
        embedElsewhere,
      },
      id,
    );
    post({ type: "done", result });
  } catch (error) {
    if (error instanceof ParserKilled) post({ type: "crashed", reason: error.message });
    else if (error instanceof Interrupted) post({ type: "interrupted" });
    else throw error; // the pool sees the crash and retries the job
  } finally {
    current = null;
    if (stopRequested) await shutdown();
  }
}

/** Vectors for the texts from an idle worker, or null when none is free. */
function embedElsewhere(texts: string[]): Promise<Float32Array[] | null> {
  const requestId = ++lastRequestId;
  post({ type: "delegate", requestId, task: texts });
  return new Promise((resolve) => delegations.set(requestId, resolve));
}

/** Embeds another worker's batch (a delegated task); null tells it to do the batch itself. */
async function embedFor(texts: string[]): Promise<void> {
  try {
    const { embedder } = await resources!;
    post({ type: "task-done", result: (await embedder.embed(texts, "passage")).vectors });
  } catch (error) {
    console.error("Embedding a batch for another ingestion worker failed:", error);
    post({ type: "task-done", result: null });
  }
}

async function shutdown(): Promise<void> {
  const opened = await resources?.catch(() => null);
  parser?.close();
  if (opened) {
    await opened.embedder.close();
    opened.db.close();
  }
  process.exit(0);
}

self.addEventListener("message", (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  switch (message.type) {
    case "init":
      void init(message);
      return;
    case "job":
      void runJob(message.id, message.payload as JobPayload);
      return;
    case "task":
      void embedFor(message.task as string[]);
      return;
    case "delegated":
      delegations.get(message.requestId)?.(message.result as Float32Array[] | null);
      delegations.delete(message.requestId);
      return;
    case "cancel":
      if (current?.id === message.id) current.abort.abort(new Cancelled(`Document ${message.id} was deleted`));
      return;
    case "stop":
      stopRequested = true;
      if (current) current.abort.abort(new Interrupted("The ingestion worker is stopping"));
      else void shutdown();
      return;
  }
});
