// A search thread: holds open segments and answers searches on them, so that scoring a million chunks
// never holds up the HTTP thread. There is one per core (segment-searcher.ts), and a search that finds
// them idle is split between them: every thread scores its shard of the segment (shard.ts), so one
// search uses every core.
// A segment's files are read through views of the HTTP thread's mappings (segment-mappings.ts).
import { prepareRuntime } from "../runtime/index.ts";
import { KeywordSegment } from "./keyword/index.ts";
import { VectorSegment } from "./vector/segment.ts";
import { mapFile, viewOf, type SharedFile } from "./file-mapping.ts";
import type { FromSearchThread, KeywordQuery, ToSearchThread } from "./search-thread-protocol.ts";
import { packHits, type RowidHit } from "./rowid-hit.ts";
import type { Shard } from "./shard.ts";

declare const self: Worker;

const vectorSegments = new Map<string, VectorSegment>();
const keywordSegments = new Map<string, KeywordSegment>();
/** The HTTP thread's mappings of the files of each open directory, by path. */
const sharedFiles = new Map<string, Map<string, SharedFile>>();
let ready: Promise<void> = Promise.resolve();

/**
 * A view of the HTTP thread's mapping of the file. Without one (a search for a directory this thread was
 * not sent, which segment-searcher.ts never does), the file is mapped here from disk.
 */
function sharedOrOwn(dir: string): (path: string) => Uint8Array {
  const files = sharedFiles.get(dir);
  return (path) => {
    const file = files?.get(path);
    return file ? viewOf(file) : mapFile(path);
  };
}

/** `dimension`: the query's (a segment of other vectors fails to open). */
function vectorSegment(dir: string, dimension: number): VectorSegment {
  let open = vectorSegments.get(dir);
  if (!open) vectorSegments.set(dir, (open = VectorSegment.open(dir, dimension, undefined, sharedOrOwn(dir))));
  return open;
}

function keywordSegment(dir: string): KeywordSegment {
  let open = keywordSegments.get(dir);
  if (!open) keywordSegments.set(dir, (open = KeywordSegment.open(dir, sharedOrOwn(dir))));
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
    ready = prepareRuntime(message.dataDir);
    return;
  }
  await ready;
  if (message.type === "open") {
    sharedFiles.set(message.dir, new Map(message.files.map((file) => [file.path, file])));
  } else if (message.type === "close") {
    vectorSegments.delete(message.dir);
    keywordSegments.delete(message.dir);
    sharedFiles.delete(message.dir);
    post({ type: "closed", id: message.id });
  } else {
    try {
      const hits =
        message.type === "vector"
          ? vectorSegment(message.dir, message.query.length).search(message.query, message.eligible, message.eligibleCount, message.limit, message.shards)
          : keywordSearch(message.dir, message.query, message.eligible, message.limit, message.shard);
      post({ type: "result", id: message.id, hits: packHits(hits) });
    } catch (error) {
      post({ type: "failed", id: message.id, message: (error as Error).message });
    }
  }
};
