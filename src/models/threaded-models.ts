// The HTTP thread's side of the model threads (model-thread.ts): one thread per model, loaded at startup
// (a model that cannot be loaded fails the start with the loader's message). Should a thread die, the
// requests it held fail and the next request starts it again.
import { SHARE_ENV } from "node:worker_threads";
import { stopWorker } from "../worker-stop.ts";
import { describeModels, type LoadModelsOptions } from "./load.ts";
import type { FromModelThread, ModelRole, ToModelThread } from "./model-thread-protocol.ts";
import type { EmbedResult, EmbedSide, QueryEmbedder, Reranker, SearchModels } from "./types.ts";

type Loaded = Extract<FromModelThread, { type: "loaded" }>;
type Reply = Extract<FromModelThread, { type: "embedded" | "reranked" }>;

/** How long closing waits for the thread to release its model before ending it. */
const CLOSE_GRACE_MS = 2_000;

class ModelThread {
  private worker: Worker | null = null;
  private loaded: Promise<Loaded> | null = null;
  private readonly pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  private lastId = 0;

  constructor(
    private readonly role: ModelRole,
    private readonly dataDir: string,
    private readonly options: LoadModelsOptions,
  ) {}

  /** Starts the thread and loads its model, unless that is done or under way. */
  start(): Promise<Loaded> {
    if (this.loaded) return this.loaded;
    // The compiled binary's native addon loaders need the environment src/runtime set (see ingest/pool.ts).
    const worker = new Worker(new URL("./model-thread.ts", import.meta.url).href, { env: SHARE_ENV });
    this.worker = worker;
    const loaded = new Promise<Loaded>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<FromModelThread>) => {
        const message = event.data;
        if (message.type === "loaded") {
          // Loading keeps the process alive (nothing else may yet); a loaded model does not.
          (worker as Worker & { unref(): void }).unref();
          resolve(message);
        }
        else if (message.type === "load-failed") {
          reject(new Error(message.message));
          this.forget(worker);
          worker.terminate();
        } else this.receive(message);
      };
      worker.addEventListener("close", () => {
        reject(new Error(`The ${this.role} thread stopped while loading its model`));
        this.forget(worker);
      });
    });
    worker.postMessage({ type: "load", role: this.role, dataDir: this.dataDir, options: this.options } satisfies ToModelThread);
    return (this.loaded = loaded);
  }

  async request(message: (id: number) => ToModelThread): Promise<Reply> {
    await this.start();
    const worker = this.worker;
    if (!worker) throw new Error(`The ${this.role} thread stopped`);
    const id = ++this.lastId;
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage(message(id));
    });
  }

  /** Lets the thread release its model (for up to CLOSE_GRACE_MS), then ends it. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.forget(worker);
    await stopWorker(worker, { type: "close" } satisfies ToModelThread, "closed" satisfies FromModelThread["type"], CLOSE_GRACE_MS);
  }

  private receive(message: FromModelThread): void {
    if (message.type !== "embedded" && message.type !== "reranked" && message.type !== "failed") return;
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    if (message.type === "failed") waiting.reject(new Error(message.message));
    else waiting.resolve(message);
  }

  /** Drops a thread that is gone or going: what it held fails, and the next request starts another. */
  private forget(worker: Worker): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.loaded = null;
    for (const waiting of this.pending.values()) waiting.reject(new Error(`The ${this.role} thread stopped`));
    this.pending.clear();
  }
}

class ThreadedEmbedder implements QueryEmbedder {
  constructor(
    private readonly thread: ModelThread,
    readonly id: string,
    readonly dimension: number,
    readonly maxTokens: number,
  ) {}

  async embed(texts: string[], side: EmbedSide): Promise<EmbedResult> {
    const reply = await this.thread.request((id) => ({ type: "embed", id, texts, side }));
    return (reply as Extract<Reply, { type: "embedded" }>).result;
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

class ThreadedReranker implements Reranker {
  constructor(
    private readonly thread: ModelThread,
    readonly id: string,
  ) {}

  async score(query: string, passages: string[]): Promise<number[]> {
    const reply = await this.thread.request((id) => ({ type: "rerank", id, query, passages }));
    return (reply as Extract<Reply, { type: "reranked" }>).scores;
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

/** The models of `opts`, each loaded on its own thread; `dataDir` is where a compiled binary unpacks its runtime. */
export async function loadThreadedModels(dataDir: string, opts: LoadModelsOptions): Promise<SearchModels> {
  const embedThread = new ModelThread("embedder", dataDir, opts);
  const loaded = await embedThread.start();
  const embedder = new ThreadedEmbedder(embedThread, loaded.id, loaded.dimension, loaded.maxTokens);
  let reranker: Reranker | null = null;
  if (opts.rerankModel) {
    const rerankThread = new ModelThread("reranker", dataDir, opts);
    try {
      reranker = new ThreadedReranker(rerankThread, (await rerankThread.start()).id);
    } catch (error) {
      await embedder.close();
      throw error;
    }
  }
  return { embedder, reranker, description: describeModels(embedder, reranker) };
}
