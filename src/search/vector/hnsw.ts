// The HNSW graph of a vector segment (usearch): cosine over the segment's own 8-bit codes, which usearch
// stores as they are (i8 → i8), so its distances see the same per-vector scaled codes the exact scans
// score. (Handing it floats would quantize them as round(127 · x), a few levels for a 512-d unit vector.)
import type { Index } from "usearch";

/**
 * Graph degree and build-time beam (usearch's defaults). Measured recall@10 at 100k chunks
 * (scripts/bench/vector-segment.ts) with 64 / 256 graph results beyond the limit: real embeddings 0.99 /
 * 0.998, synthetic clusters 0.988 / 0.992; uniformly random vectors, the worst case, 0.27 / 0.62 (20k).
 */
const CONNECTIVITY = 16;
const EXPANSION_ADD = 128;
/**
 * The search beam; a search asking for more results than this widens it to their number. 128 rather than
 * 64 leaves a margin for the recall lost as a segment grows towards a million chunks.
 */
export const EXPANSION_SEARCH = 128;

export type Hnsw = Index;

let usearch: typeof import("usearch") | null = null;

export function newHnsw(dimension: number): Hnsw {
  // Required on first use, not imported: its native addon exists in a compiled binary only once
  // prepareRuntime has unpacked it, which may be after this module is evaluated (scripts/build.ts).
  usearch ??= require("usearch") as typeof import("usearch");
  return new usearch.Index({
    dimensions: dimension,
    metric: usearch.MetricKind.Cos,
    quantization: usearch.ScalarKind.I8,
    connectivity: CONNECTIVITY,
    expansion_add: EXPANSION_ADD,
    expansion_search: EXPANSION_SEARCH,
    multi: false,
  });
}
