// Messages between the HTTP thread (vector-searcher.ts) and the vector search thread (vector-search-worker.ts).
import type { RowidHit } from "./rowid-hit.ts";

export type ToVectorWorker =
  | { type: "init"; dataDir: string; dimension: number }
  | { type: "open"; dir: string }
  | { type: "close"; dir: string }
  | { type: "search"; id: number; dir: string; query: Float32Array; eligible: Uint8Array | null; eligibleCount: number; limit: number };

export type FromVectorWorker = { type: "result"; id: number; hits: RowidHit[] } | { type: "failed"; id: number; message: string };
