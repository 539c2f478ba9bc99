// The vector search thread: holds the open vector segments and answers searches on them. A search at 1M
// chunks scores ~20k codes (~8 ms), which must not hold up the HTTP thread; it runs here beside the
// keyword side on the other core.
import { prepareRuntime } from "../runtime/index.ts";
import { VectorSegment } from "./vector/segment.ts";
import type { FromVectorWorker, ToVectorWorker } from "./vector-search-protocol.ts";

declare const self: Worker;

const segments = new Map<string, VectorSegment>();
let dimension = 0;
let ready: Promise<void> = Promise.resolve();

function segment(dir: string): VectorSegment {
  let open = segments.get(dir);
  if (!open) segments.set(dir, (open = VectorSegment.open(dir, dimension)));
  return open;
}

function post(message: FromVectorWorker): void {
  self.postMessage(message);
}

self.onmessage = async (event: MessageEvent<ToVectorWorker>) => {
  const message = event.data;
  if (message.type === "init") {
    dimension = message.dimension;
    ready = prepareRuntime(message.dataDir);
    return;
  }
  await ready;
  if (message.type === "open") {
    try {
      segment(message.dir);
    } catch {
      // Reported by the first search on it.
    }
  } else if (message.type === "close") {
    segments.delete(message.dir);
  } else {
    try {
      const hits = segment(message.dir).search(message.query, message.eligible, message.eligibleCount, message.limit);
      post({ type: "result", id: message.id, hits });
    } catch (error) {
      post({ type: "failed", id: message.id, message: (error as Error).message });
    }
  }
};
