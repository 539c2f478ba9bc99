// One knowledge base's chunk vectors as an immutable on-disk segment (written by segment-writer.ts):
// an HNSW graph for large candidate sets and the 8-bit codes by slot for exact scores. Opening maps the
// files into memory; only the pages a search touches become resident. The side files map in
// microseconds, but usearch's view walks every graph node to build its key table: ~1-2 ms and ~0.2 MB
// resident per 1,000 chunks (measured at 100k and 200k on busy cores), so open large segments off the
// request path.
//
// usearch's JavaScript binding has no filter predicate, so a filtered search over-fetches from the graph
// (limit / selectivity × margin, widened while too few eligible hits come back) and scans the eligible
// chunks' codes exactly when that is cheaper (few eligible chunks) or the graph keeps missing them: it
// never returns fewer than min(limit, eligible chunks in the segment) hits. Every hit is scored on the
// codes, exactly as the in-memory VectorIndex scores (vector/int8-codes.ts), so the two can be merged.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { TopK } from "../topk.ts";
import { EXPANSION_SEARCH, newHnsw, type Hnsw } from "./hnsw.ts";
import { codeCosine, quantize } from "./int8-codes.ts";
import { readMeta, SEGMENT_FILES } from "./segment-files.ts";

export interface SegmentHit {
  rowid: number;
  score: number;
}

/** How a search chooses between the graph and a scan of the codes; open() takes other values for measuring. */
export interface SearchTuning {
  /** Graph results asked for beyond `limit`, then re-scored on the codes. */
  minCandidates: number;
  /** Over-fetch factor on top of limit / selectivity for filtered graph searches. */
  margin: number;
  /**
   * What one graph result costs in codes scanned: a filtered search asks the graph for `wanted` results
   * only while wanted × graphCost < eligible chunks, and scans the eligible chunks' codes otherwise.
   */
  graphCost: number;
}

/**
 * Measured with scripts/bench/vector-segment.ts at 100k chunks (real embeddings, limit 10, 2 busy cores): a
 * graph search costs ~5 µs per result asked for (400-4,000), a scan ~1-2 µs per eligible chunk; the two
 * meet at ~3k eligible. Over-fetching from the graph thus pays from about sqrt(margin × graphCost × limit ×
 * chunks) eligible chunks: ~9k of 1M for limit 10, ~28k for limit 100.
 */
export const SEARCH_TUNING: SearchTuning = { minCandidates: EXPANSION_SEARCH, margin: 2, graphCost: 4 };
/** Each retry asks the graph for this many times more candidates. */
const WIDEN = 4;

function mapped<T>(dir: string, file: string, count: number, View: { new (buffer: ArrayBufferLike, offset: number, length: number): T }, per: number): T {
  const bytes = Bun.mmap(join(dir, file), { shared: false });
  return new View(bytes.buffer, bytes.byteOffset, count * per);
}

export class VectorSegment {
  private constructor(
    readonly dir: string,
    readonly dimension: number,
    private hnsw: Hnsw | null,
    private readonly tuning: SearchTuning,
    /** SegmentMeta.graphRemovals. */
    readonly graphRemovals: number,
    /** The mapped side files (read-only): rowid, codes and scale by slot. */
    readonly rowids: Int32Array,
    readonly codes: Int8Array,
    readonly scales: Float32Array,
  ) {}

  static open(dir: string, dimension: number, tuning = SEARCH_TUNING): VectorSegment {
    const { count, graphRemovals } = readMeta(dir, dimension);
    if (count === 0) return new VectorSegment(dir, dimension, null, tuning, 0, new Int32Array(0), new Int8Array(0), new Float32Array(0));
    const hnswPath = join(dir, SEGMENT_FILES.hnsw);
    if (!existsSync(hnswPath)) throw new Error(`Vector segment ${dir} has no ${SEGMENT_FILES.hnsw}`);
    const hnsw = newHnsw(dimension);
    hnsw.view(hnswPath);
    return new VectorSegment(
      dir,
      dimension,
      hnsw,
      tuning,
      graphRemovals,
      mapped(dir, SEGMENT_FILES.rowids, count, Int32Array, 1),
      mapped(dir, SEGMENT_FILES.codes, count, Int8Array, dimension),
      mapped(dir, SEGMENT_FILES.scales, count, Float32Array, 1),
    );
  }

  get count(): number {
    return this.rowids.length;
  }

  /** The slot of a rowid, or -1. */
  slotOf(rowid: number): number {
    let lo = 0;
    let hi = this.rowids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const value = this.rowids[mid];
      if (value === rowid) return mid;
      if (value < rowid) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /**
   * The `limit` chunks most similar to the unit-length query, best first, scored by cosine similarity.
   * `eligible`, indexed by rowid, marks the chunks that may be returned (null: all); `eligibleCount` is
   * how many it marks (it may count chunks outside this segment: that only costs a retry).
   */
  search(query: Float32Array, eligible: Uint8Array | null, eligibleCount: number, limit: number): SegmentHit[] {
    if (!this.hnsw || limit <= 0 || query.length !== this.dimension || (eligible !== null && eligibleCount <= 0)) return [];
    const count = this.count;
    const { minCandidates, margin, graphCost } = this.tuning;
    const candidates = eligible === null ? count : Math.min(eligibleCount, count);
    const queryCodes = new Int8Array(this.dimension);
    quantize(query, queryCodes, 0);
    const overFetch = eligible === null ? 1 : margin;
    let wanted = Math.max(limit + minCandidates, Math.ceil(((limit * count) / Math.max(candidates, 1)) * overFetch));
    while (wanted * graphCost < candidates && wanted < count) {
      const { hits, reached } = this.graphSearch(query, queryCodes, eligible, limit, wanted);
      // Fewer results than asked for: the search ran out of graph, stuck in a region that is not linked
      // to the rest (seen at 1M chunks with dozens of near-duplicates of one passage). Only a scan is right.
      if (reached < wanted) break;
      if (hits.length >= limit) return hits;
      wanted *= WIDEN;
    }
    return this.scan(query, eligible, limit);
  }

  /** Drops the mappings (the graph's and the side files' are unmapped when they are garbage collected). */
  close(): void {
    this.hnsw = null;
  }

  /**
   * Asks the graph for `wanted` neighbours and keeps the best `limit` eligible ones, scored on the codes;
   * `reached` is how many neighbours the graph gave.
   */
  private graphSearch(
    query: Float32Array,
    queryCodes: Int8Array,
    eligible: Uint8Array | null,
    limit: number,
    wanted: number,
  ): { hits: SegmentHit[]; reached: number } {
    const { keys } = this.hnsw!.search(queryCodes, wanted, 1);
    const best = new TopK(limit);
    for (let i = 0; i < keys.length; i++) {
      const rowid = Number(keys[i]);
      if (eligible !== null && eligible[rowid] !== 1) continue;
      const slot = this.slotOf(rowid);
      if (slot >= 0) best.push(slot, this.score(query, slot));
    }
    return { hits: this.toHits(best), reached: keys.length };
  }

  /** Scores every eligible chunk on its codes. */
  private scan(query: Float32Array, eligible: Uint8Array | null, limit: number): SegmentHit[] {
    const best = new TopK(limit);
    const rowids = this.rowids;
    for (let slot = 0; slot < rowids.length; slot++) {
      if (eligible === null || eligible[rowids[slot]] === 1) best.push(slot, this.score(query, slot));
    }
    return this.toHits(best);
  }

  private score(query: Float32Array, slot: number): number {
    return codeCosine(query, this.codes, slot * this.dimension, this.scales[slot]);
  }

  private toHits(best: TopK): SegmentHit[] {
    return best.sorted().map((hit) => ({ rowid: this.rowids[hit.id], score: hit.score }));
  }
}
