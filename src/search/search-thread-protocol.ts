// Messages between the HTTP thread (segment-searcher.ts) and a search thread (search-thread.ts).
import type { SharedFile } from "./file-mapping.ts";
import type { Shard } from "./shard.ts";

/** A keyword query with the knowledge base's combined statistics (segment and delta), resolved by the HTTP thread. */
export interface KeywordQuery {
  /** Query terms and their weights (keyword/bm25.ts queryTermWeights). */
  terms: [string, number][];
  chunkCount: number;
  averageLength: number;
  /** Each query term's document frequency across segment and delta. */
  documentFrequencies: [string, number][];
  /** The share of the knowledge base's chunks that the search's filter admits (1 without one). */
  eligibleShare: number;
}

export type ToSearchThread =
  | { type: "init"; dataDir: string }
  /** Where the HTTP thread mapped a segment directory's files (segment-mappings.ts): searches of it view them. */
  | { type: "open"; dir: string; files: SharedFile[] }
  /** Drops the directory's segment and views; answered with "closed", after which the mappings may go. */
  | { type: "close"; id: number; dir: string }
  /** `shards`: those of the search this thread scores (several in one pass when a hybrid search's vector side has fewer threads). */
  | { type: "vector"; id: number; shards: Shard[]; dir: string; query: Float32Array; eligible: Uint8Array | null; eligibleCount: number; limit: number }
  | { type: "keyword"; id: number; shard: Shard; dir: string; query: KeywordQuery; eligible: Uint8Array | null; limit: number };

export type FromSearchThread =
  /** `hits`: packed (rowid-hit.ts packHits). */
  | { type: "result"; id: number; hits: Float64Array }
  | { type: "failed"; id: number; message: string }
  | { type: "closed"; id: number };
