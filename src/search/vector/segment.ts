// One knowledge base's chunk vectors as an immutable on-disk segment (written by segment-writer.ts): the
// 8-bit codes by slot, scored exactly, and an inverted file (vector/ivf.ts) that groups the slots into
// lists around centroids. Opening maps the files into memory, in well under a millisecond at any size;
// only the pages a search touches become resident.
//
// A search walks the lists nearest the query until it has visited a budget of vectors (SEARCH_TUNING: 6 %
// of the segment, 10 % under a filter, at least 20,000) and holds `limit` hits, ranking them by their
// product-quantized codes (vector/pq.ts), then re-scores the best thousand or so on the 8-bit codes. A
// filter skips ineligible vectors as they are visited (the lists' rowids are stored in list order, so that
// check reads memory in order, or, under a broad filter, as scores are read back); when it leaves few
// chunks (a third of the budget), they are all scored exactly instead. One list (a small segment) is
// always scored exactly. Either way a search never returns fewer than min(limit, eligible chunks in the
// segment) hits. Every hit is scored on the codes, exactly as the in-memory VectorIndex scores
// (vector/int8-codes.ts), so the two can be merged.
import { join } from "node:path";
import { TopK } from "../topk.ts";
import { MarkedSlots } from "../marked-slots.ts";
import { hitsBySlot, mergeShardHits } from "../rowid-hit.ts";
import type { CoarseQuantizer } from "./ivf.ts";
import { ListRanker } from "./list-ranker.ts";
import { CodeScan } from "./code-scan.ts";
import { PQ_CENTROIDS, ProductQuantizer } from "./pq.ts";
import { blockedLength, blockedRange } from "./pq-blocks.ts";
import { PqScan } from "./pq-scan.ts";
import { parseMeta, SEGMENT_FILES } from "./segment-files.ts";
import { shardRange, WHOLE, type Shard } from "../shard.ts";
import { mapFile, type MapFile } from "../file-mapping.ts";
import { inMemory, willNeed } from "../page-advice.ts";

export interface SegmentHit {
  rowid: number;
  score: number;
}

/** How many vectors a search visits; open() takes other values for measuring. */
export interface SearchTuning {
  /** The share of the segment's vectors visited. */
  visitedShare: number;
  /** The share a filtered search visits (visitedShare when absent): the filter's best lie further out. */
  filteredVisitedShare?: number;
  /** At least this many (all of them in a smaller segment). */
  minVisited: number;
}

/**
 * Measured on the 1M-chunk segment of bench:scale (near-real vectors: 14k real passages' embeddings, each
 * with ~70 noisy copies; 200 real queries), recall@10 against scoring every 8-bit code: 0.953 / 0.969 /
 * 0.974 / 0.981 / 0.983 visiting 4 / 5 / 6 / 7 / 10 % of the segment (format 4's 6-bit codes: 0.954 at
 * 5 %, 0.960 at 10 %). The vector side of a search, top 100 on one thread, 16 rounds interleaved with
 * format 4 at 10 %: 2.89 -> 2.07 ms (medians).
 * Filtered searches keep visiting 10 %: there (100 queries), filters admitting 2 / 3 / 5 / 10 % of the
 * chunks found 0.930 / 0.928 / 0.936 / 0.959 of the exact filtered top 10 visiting 6 %, in 6.6-7.6 ms a
 * search. Visiting 10 % (and scoring up to a third of that exactly, EXACT_BELOW_SHARE_OF_BUDGET), 10 %
 * filters find 0.977 in 5.4-6.1 ms (format 4: 0.956-0.977 in 6.9-7.1 ms for these four).
 */
export const SEARCH_TUNING: SearchTuning = { visitedShare: 0.06, filteredVisitedShare: 0.1, minVisited: 20_000 };
/** Candidates re-scored on the 8-bit codes: RERANK_FACTOR × limit, at least RERANK_MIN. */
const RERANK_FACTOR = 10;
const RERANK_MIN = 1000;
/**
 * A filter leaving at most budget / this many chunks has them all scored exactly: 33k at 1M chunks, where
 * scoring 20k / 30k / 50k / 100k exactly took 3.2-4.0 / 6.0-6.3 / 8.9-10.8 / 17.7-19.5 ms a search, and
 * walking the lists 5.2-7.6 ms.
 */
const EXACT_BELOW_SHARE_OF_BUDGET = 3;
/**
 * Under a filter admitting at least this share of the segment, the lists' codes are scored whole and the
 * filter checked only for the scores read back (those above the weakest candidate held), instead of
 * checking every position and queuing the eligible codes one by one. The same hits; at 1M chunks, 100
 * queries, 6 interleaved rounds, filters admitting 5 / 10 / 25 / 50 %: 3.4 / 3.9 / 5.6 / 8.7 -> 3.1 / 3.0 /
 * 2.9 / 3.4 ms a search (medians). At 3 % (another run) both took 5.8 ms.
 */
const MASK_AT_READ_BACK_SHARE = 1 / 32;


export class VectorSegment {
  /** Made at the first probing search (it copies the centroids). */
  private ranker: ListRanker | null = null;

  private constructor(
    readonly dir: string,
    readonly dimension: number,
    private readonly tuning: SearchTuning,
    /** SegmentMeta.trainedCount. */
    readonly trainedCount: number,
    /** The mapped files (read-only): rowid, codes and scale by slot; centroids and slots by list. */
    readonly rowids: Int32Array,
    readonly codes: Int8Array,
    readonly scales: Float32Array,
    /** The lists' centroids under their groups'. */
    readonly quantizer: CoarseQuantizer,
    private readonly listStarts: Int32Array,
    private readonly listSlots: Int32Array,
    /** The rowid at each position of listSlots. */
    private readonly listRowids: Int32Array,
    /** The product quantizer and its codes by list position, blocked (null for one list, scored exactly). */
    readonly pq: ProductQuantizer | null,
    readonly pqCodes: Uint8Array | null,
  ) {}

  static open(dir: string, dimension: number, tuning = SEARCH_TUNING, map: MapFile = mapFile): VectorSegment {
    // The meta file is read through `map` like the others: a search thread then never reads the disk, where a
    // segment the HTTP thread holds may already be removed (segment-mappings.ts).
    const { count, lists, groups, trainedCount } = parseMeta(map(join(dir, SEGMENT_FILES.meta)), dir, dimension);
    const mapped = <T>(file: string, length: number, View: { new (buffer: ArrayBufferLike, offset: number, length: number): T }): T => {
      const bytes = map(join(dir, file));
      return new View(bytes.buffer, bytes.byteOffset, length);
    };
    if (count === 0) {
      const quantizer = { centroids: new Float32Array(0), groups: new Float32Array(0), groupStarts: new Int32Array(1) };
      return new VectorSegment(dir, dimension, tuning, 0, new Int32Array(0), new Int8Array(0), new Float32Array(0), quantizer, new Int32Array(1), new Int32Array(0), new Int32Array(0), null, null);
    }
    const pq = lists > 1 ? new ProductQuantizer(dimension, mapped(SEGMENT_FILES.pqCodebooks, dimension * PQ_CENTROIDS, Float32Array)) : null;
    return new VectorSegment(
      dir,
      dimension,
      tuning,
      trainedCount,
      mapped(SEGMENT_FILES.rowids, count, Int32Array),
      mapped(SEGMENT_FILES.codes, count * dimension, Int8Array),
      mapped(SEGMENT_FILES.scales, count, Float32Array),
      {
        centroids: mapped(SEGMENT_FILES.centroids, lists * dimension, Float32Array),
        groups: mapped(SEGMENT_FILES.groups, groups * dimension, Float32Array),
        groupStarts: mapped(SEGMENT_FILES.groupStarts, groups + 1, Int32Array),
      },
      mapped(SEGMENT_FILES.listStarts, lists + 1, Int32Array),
      mapped(SEGMENT_FILES.listSlots, count, Int32Array),
      mapped(SEGMENT_FILES.listRowids, count, Int32Array),
      pq,
      pq ? mapped(SEGMENT_FILES.pqCodes, blockedLength(count, pq.codeBytes), Uint8Array) : null,
    );
  }

  get count(): number {
    return this.rowids.length;
  }

  get lists(): number {
    return this.listStarts.length - 1;
  }

  /** Each slot's list (for an incremental build, which keeps them). */
  slotLists(): Int32Array {
    const listOf = new Int32Array(this.count);
    for (let list = 0; list < this.lists; list++) {
      for (let i = this.listStarts[list]; i < this.listStarts[list + 1]; i++) listOf[this.listSlots[i]] = list;
    }
    return listOf;
  }

  /** Each slot's position in the list order (where its product-quantized code is). */
  slotPositions(): Int32Array {
    const positionOf = new Int32Array(this.count);
    this.listSlots.forEach((slot, position) => (positionOf[slot] = position));
    return positionOf;
  }

  /**
   * The `limit` chunks most similar to the unit-length query, best first, scored by cosine similarity.
   * `eligible`, indexed by rowid, marks the chunks that may be returned (null: all); `eligibleCount` is
   * how many it marks (it may count chunks outside this segment: that only costs a longer search).
   * With shards, only their parts are scored (see Shard), each as a search of its own would score it, in
   * one pass that ranks the lists and tables the query once: shards searched together or on different
   * threads find the same hits.
   */
  search(query: Float32Array, eligible: Uint8Array | null, eligibleCount: number, limit: number, shards: readonly Shard[] = [WHOLE]): SegmentHit[] {
    if (this.count === 0 || limit <= 0 || query.length !== this.dimension || (eligible !== null && eligibleCount <= 0)) return [];
    const share = eligible === null ? this.tuning.visitedShare : (this.tuning.filteredVisitedShare ?? this.tuning.visitedShare);
    const budget = Math.max(this.tuning.minVisited, Math.ceil(this.count * share), 4 * limit);
    if (!this.pq || (eligible !== null && eligibleCount <= budget / EXACT_BELOW_SHARE_OF_BUDGET)) {
      return mergeShardHits(shards.map((shard) => this.scan(query, eligible, limit, shard)), limit);
    }
    const { listStarts, listSlots, listRowids } = this;
    const table = this.pq.lookupTable(query);
    const readBackMask = eligible !== null && eligibleCount >= this.count * MASK_AT_READ_BACK_SHARE ? { mask: eligible, rowids: listRowids } : null;
    // The scans share the thread's kernel memory: each is flushed before the next one is used.
    const probes = shards.map((shard) => {
      const approximate = new TopK(Math.max(RERANK_MIN, RERANK_FACTOR * limit));
      return { shard, approximate, scan: new PqScan(table, this.pqCodes!, this.pq!.codeBytes, listSlots, approximate, readBackMask) };
    });
    let searching = probes;
    let visited = 0;
    /** Scores the list; whether the search goes on. */
    const visit = (list: number): boolean => {
      for (const { shard, scan } of searching) {
        const [start, end] = shardRange(listStarts[list], listStarts[list + 1], shard);
        if (eligible === null || readBackMask !== null) scan.addRange(start, end);
        else for (let position = start; position < end; position++) if (eligible[listRowids[position]] === 1) scan.add(position);
        scan.flush();
      }
      visited += listStarts[list + 1] - listStarts[list];
      // A shard stops once the budget is visited and it holds `limit` candidates.
      if (visited >= budget) searching = searching.filter((probe) => probe.approximate.length < limit);
      return searching.length > 0;
    };
    this.ranker ??= new ListRanker(this.quantizer.centroids, this.dimension);
    // Twice the lists of average size the budget takes: more are ranked only if the search goes on.
    const ranking = this.ranker.rank(query, Math.ceil((2 * budget * this.lists) / this.count));
    const first = this.readAhead(ranking, budget, eligible !== null);
    let going = true;
    for (let i = 0; going && i < first.length; i++) going = visit(first[i]);
    if (going) for (const list of ranking) if (!visit(list)) break;
    const hits = probes.map(({ approximate }) => this.bestOnCodes(query, limit, (exact) => exact.addEach(approximate.heldIds())));
    return mergeShardHits(hits, limit);
  }

  /**
   * The first lists of `ranking`, taken from it. Where the first one's codes are not in memory (a segment
   * just opened, its files not yet read in), those the budget will visit are taken, and all their pages asked
   * for at once (page-advice.ts), so that their disk reads overlap instead of coming fault after fault (1M
   * chunks, files out of memory: scanning the lists of a first search ~70 -> 20-35 ms).
   */
  private readAhead(ranking: Iterator<number>, budget: number, filtered: boolean): number[] {
    const next = ranking.next();
    if (next.done) return [];
    const lists = [next.value];
    const codeRange = (list: number) => blockedRange(this.listStarts[list], this.listStarts[list + 1], this.pq!.codeBytes);
    if (inMemory(this.pqCodes!, codeRange(lists[0])[0])) return lists;
    let ahead = this.listStarts[lists[0] + 1] - this.listStarts[lists[0]];
    while (ahead < budget) {
      const list = ranking.next();
      if (list.done) break;
      lists.push(list.value);
      ahead += this.listStarts[list.value + 1] - this.listStarts[list.value];
    }
    const rowidBytes = Int32Array.BYTES_PER_ELEMENT;
    for (const list of lists) {
      willNeed(this.pqCodes!, ...codeRange(list));
      if (filtered) willNeed(this.listRowids, this.listStarts[list] * rowidBytes, this.listStarts[list + 1] * rowidBytes);
    }
    return lists;
  }

  /** Scores every (eligible) chunk of the shard on its codes. */
  private scan(query: Float32Array, eligible: Uint8Array | null, limit: number, shard: Shard): SegmentHit[] {
    const rowids = this.rowids;
    const [from, to] = shardRange(0, rowids.length, shard);
    return this.bestOnCodes(query, limit, (exact) => {
      if (eligible === null) exact.addRange(from, to);
      else new MarkedSlots(rowids, eligible).forEachRun(from, to, (start, end) => exact.addRange(start, end));
    });
  }

  /** The `limit` best of the slots `queue` puts into a scan, scored exactly on their codes. */
  private bestOnCodes(query: Float32Array, limit: number, queue: (exact: CodeScan) => void): SegmentHit[] {
    const best = new TopK(limit);
    const exact = new CodeScan(query, this.codes, this.scales, best);
    queue(exact);
    exact.flush();
    return hitsBySlot(best, this.rowids);
  }
}
