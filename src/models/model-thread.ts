// A model thread: runs one of the server's query-time models (the query embedder or the reranker), so
// that inference never holds up the HTTP thread. ONNX Runtime computes on the thread that calls it, and a
// long query took up to 17 ms to embed, a rerank tens of milliseconds: every other request waited.
// Its model runs one request at a time, in arrival order.
import { prepareRuntime } from "../runtime/index.ts";
import { loadEmbedder, loadReranker } from "./load.ts";
import type { Embedder, Reranker } from "./types.ts";
import type { FromModelThread, ToModelThread } from "./model-thread-protocol.ts";

declare const self: Worker;

let embedder: Embedder | null = null;
let reranker: Reranker | null = null;

function post(message: FromModelThread): void {
  self.postMessage(message);
}

async function load(message: Extract<ToModelThread, { type: "load" }>): Promise<void> {
  try {
    await prepareRuntime(message.dataDir);
    if (message.role === "embedder") {
      embedder = await loadEmbedder(message.options);
      post({ type: "loaded", id: embedder.id, dimension: embedder.dimension, maxTokens: embedder.maxTokens });
    } else {
      reranker = await loadReranker(message.options);
      post({ type: "loaded", id: reranker.id, dimension: 0, maxTokens: 0 });
    }
  } catch (error) {
    post({ type: "load-failed", message: (error as Error).message });
  }
}

async function answer(id: number, compute: () => Promise<FromModelThread>): Promise<void> {
  try {
    post(await compute());
  } catch (error) {
    post({ type: "failed", id, message: (error as Error).message });
  }
}

self.onmessage = async (event: MessageEvent<ToModelThread>) => {
  const message = event.data;
  switch (message.type) {
    case "load":
      return load(message);
    case "embed":
      return answer(message.id, async () => ({ type: "embedded", id: message.id, result: await embedder!.embed(message.texts, message.side) }));
    case "rerank":
      return answer(message.id, async () => ({ type: "reranked", id: message.id, scores: await reranker!.score(message.query, message.passages) }));
    case "close":
      await embedder?.close();
      await reranker?.close();
      post({ type: "closed" });
  }
};
