// A search thread: holds open segments (memory-mapped) and answers searches on them, so that scoring a
// million chunks never holds up the HTTP thread. There is one per core (segment-searcher.ts), and each
// search is split between them: every thread scores its shard of the segment (shard.ts), so one search
// uses every core, and each thread reads its own share of the file pages.
import { prepareRuntime } from "../runtime/index.ts";
import { KeywordSegment } from "./keyword/index.ts";
import { VectorSegment } from "./vector/segment.ts";
import type { FromSearchThread, KeywordQuery, ToSearchThread } from "./search-thread-protocol.ts";
import type { RowidHit } from "./rowid-hit.ts";
import type { Shard } from "./shard.ts";

declare const self: Worker;

const vectorSegments = new Map<string, VectorSegment>();
const keywordSegments = new Map<string, KeywordSegment>();
let dimension = 0;
let ready: Promise<void> = Promise.resolve();

function vectorSegment(dir: string): VectorSegment {
  let open = vectorSegments.get(dir);
  if (!open) vectorSegments.set(dir, (open = VectorSegment.open(dir, dimension)));
  return open;
}

function keywordSegment(dir: string): KeywordSegment {
  let open = keywordSegments.get(dir);
  if (!open) keywordSegments.set(dir, (open = KeywordSegment.open(dir)));
  return open;
}

function keywordSearch(dir: string, query: KeywordQuery, eligible: Uint8Array | null, limit: number, shard: Shard): RowidHit[] {
  const frequencies = new Map(query.documentFrequencies);
  const stats = { chunkCount: query.chunkCount, averageLength: query.averageLength, documentFrequency: (term: string) => frequencies.get(term) ?? 0 };
  return keywordSegment(dir).search(new Map(query.terms), stats, eligible, limit, { shard, eligibleShare: query.eligibleShare });
}

function post(message: FromSearchThread): void {
  self.postMessage(message);
}

self.onmessage = async (event: MessageEvent<ToSearchThread>) => {
  const message = event.data;
  if (message.type === "init") {
    dimension = message.dimension;
    ready = prepareRuntime(message.dataDir);
    return;
  }
  await ready;
  if (message.type === "open") {
    try {
      vectorSegment(message.dir);
    } catch {
      // Reported by the first search on it.
    }
  } else if (message.type === "close") {
    vectorSegments.delete(message.dir);
    keywordSegments.delete(message.dir);
  } else {
    try {
      const hits =
        message.type === "vector"
          ? vectorSegment(message.dir).search(message.query, message.eligible, message.eligibleCount, message.limit, message.shard)
          : keywordSearch(message.dir, message.query, message.eligible, message.limit, message.shard);
      post({ type: "result", id: message.id, hits });
    } catch (error) {
      post({ type: "failed", id: message.id, message: (error as Error).message });
    }
  }
};
