// A keyword segment opened by memory-mapping its file (format in segment-format.ts): opening reads only
// the header, and the dictionary is searched in place (binary search over the sorted term bytes), so a
// segment of a million chunks costs no parsing and no heap beyond what a search touches.
import { join } from "node:path";
import type { KeywordHit, KeywordStats } from "./bm25.ts";
import { decodeHeader, KEYWORD_SEGMENT_FILE, type Section, type SegmentHeader } from "./segment-format.ts";
import type { PostingSource } from "./posting-cursor.ts";
import { maxScoreSearch } from "./max-score.ts";
import { denseSumSearch } from "./dense-sum.ts";
import type { QueryTerm } from "./term-cursors.ts";
import { shardRange, WHOLE, type Shard } from "../shard.ts";
import { hitsBySlot } from "../rowid-hit.ts";
import { mapFile, type MapFile } from "../file-mapping.ts";

const utf8 = new TextEncoder();

/**
 * How a search scores the segment; both are exact (the same chunks and scores, up to the order in which
 * a chunk's term scores are added). "auto" picks by the plan below; the others are for tests and benchmarks.
 */
export type KeywordStrategy = "auto" | "max-score" | "dense-sum";

/**
 * MaxScore (max-score.ts) pays off where it can skip postings: when the postings are sparse among the
 * chunks, or when one common term holds most of them (it becomes non-essential and is only looked up for
 * the other terms' candidates). Otherwise summing every posting (dense-sum.ts) is cheaper: its work is a
 * few ns a posting plus ~1.6 ns a chunk, and no lookup per candidate. Measured on a 500,000-chunk shard of
 * bench:scale, the 431 evaluation queries of up to 30 terms, per query on both shards: top 10 7.41 ms
 * MaxScore, 4.65 dense, 4.59 by this plan (4.44 if the faster of the two were always known); top 100
 * 10.64, 4.76 and 4.81 (best 4.72). Paragraph-long queries always go dense: their top chunks match
 * dozens of their terms, so there is little to skip.
 */
const SPARSE_POSTINGS_PER_CHUNK = 1 / 8;
const DOMINANT_TERM_SHARE = 0.6;
const PRUNE_UP_TO_TERMS = 30;
/**
 * Under a filter that admits fewer chunks, MaxScore skips the others' postings unscored, where the sum
 * adds them all and drops them as the window is read back. Measured at 1M chunks, the whole segment as one shard,
 * the 459 evaluation queries, top 10 / top 100, ms a query, MaxScore against the sum (dense-sum.ts, which
 * walks the filter's chunks where it admits fewer than WALK_BELOW_SHARE): 1 % of the chunks 1.75 / 2.27
 * against 2.08 / 2.15; 5 % 1.86 / 2.42 against 1.97 / 2.54; 10 % 2.12 / 2.78 against 1.85 / 2.50;
 * 25 % 2.73 / 3.58 against 1.78 / 2.16. (With the sum's kernel of before, 1/3 was the crossing.)
 */
const PRUNE_BELOW_ELIGIBLE_SHARE = 1 / 16;

function prunes(termDf: Uint32Array, terms: { id: number }[], chunkCount: number, eligibleShare: number): boolean {
  if (terms.length > PRUNE_UP_TO_TERMS) return false;
  if (eligibleShare < PRUNE_BELOW_ELIGIBLE_SHARE) return true;
  let postings = 0;
  let most = 0;
  for (const { id } of terms) {
    postings += termDf[id];
    most = Math.max(most, termDf[id]);
  }
  return postings < chunkCount * SPARSE_POSTINGS_PER_CHUNK || most > postings * DOMINANT_TERM_SHARE;
}

export class KeywordSegment implements PostingSource {
  readonly chunkCount: number;
  readonly totalLength: number;
  readonly rowids: Uint32Array;
  readonly lengths: Uint32Array;
  readonly postingWords: Int32Array;
  readonly termBlocks: Uint32Array;
  readonly termDf: Uint32Array;
  readonly blockLast: Uint32Array;
  readonly blockOffset: Uint32Array;
  readonly blockMaxTf: Uint16Array;
  readonly blockMinLen: Uint16Array;
  private readonly termBytes: Uint8Array;
  private readonly termStarts: Uint32Array;

  private constructor(bytes: Uint8Array, header: SegmentHeader) {
    const { offsets, chunkCount, termCount, blockCount } = header;
    const view = <T>(Array: { new (buffer: ArrayBufferLike, offset: number, length: number): T }, section: Section, length: number) =>
      new Array(bytes.buffer, bytes.byteOffset + offsets[section], length);
    this.chunkCount = chunkCount;
    this.totalLength = header.totalLength;
    this.rowids = view(Uint32Array, "rowids", chunkCount);
    this.lengths = view(Uint32Array, "lengths", chunkCount);
    this.postingWords = view(Int32Array, "postings", header.postingsBytes / 4);
    this.termBytes = view(Uint8Array, "termBytes", header.termBytesLength);
    this.termStarts = view(Uint32Array, "termStarts", termCount + 1);
    this.termBlocks = view(Uint32Array, "termBlocks", termCount + 1);
    this.termDf = view(Uint32Array, "termDf", termCount);
    this.blockLast = view(Uint32Array, "blockLast", blockCount);
    this.blockOffset = view(Uint32Array, "blockOffset", blockCount);
    this.blockMaxTf = view(Uint16Array, "blockMaxTf", blockCount);
    this.blockMinLen = view(Uint16Array, "blockMinLen", blockCount);
  }

  /** Maps `dir`/keyword.seg (the file may be deleted meanwhile: the mapping stays). */
  static open(dir: string, map: MapFile = mapFile): KeywordSegment {
    const path = join(dir, KEYWORD_SEGMENT_FILE);
    const bytes = map(path);
    return new KeywordSegment(bytes, decodeHeader(bytes, path));
  }

  /** The term's index in the dictionary, or −1. */
  termId(term: string): number {
    const key = utf8.encode(term);
    const bytes = this.termBytes;
    let low = 0;
    let high = this.termStarts.length - 2;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const start = this.termStarts[middle];
      const length = this.termStarts[middle + 1] - start;
      let order = 0;
      for (let i = 0; i < length && i < key.length && order === 0; i++) order = bytes[start + i] - key[i];
      if (order === 0) order = length - key.length;
      if (order === 0) return middle;
      if (order < 0) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  /** Chunks of this segment containing the term. */
  documentFrequency(term: string): number {
    const id = this.termId(term);
    return id < 0 ? 0 : this.termDf[id];
  }

  /**
   * The `limit` best chunks of this segment by BM25 with the caller's statistics (those of the whole
   * knowledge base, segment and delta together). `eligible`, indexed by rowid, marks the chunks that may
   * be returned, `eligibleShare` of the knowledge base's chunks (it only guides the choice of strategy).
   * `shard` searches only that share of the chunks (see shard.ts).
   */
  search(
    weights: Map<string, number>,
    stats: KeywordStats,
    eligible: Uint8Array | null,
    limit: number,
    { strategy = "auto", shard = WHOLE, eligibleShare = 1 }: { strategy?: KeywordStrategy; shard?: Shard; eligibleShare?: number } = {},
  ): KeywordHit[] {
    if (limit <= 0 || this.chunkCount === 0) return [];
    const terms: QueryTerm[] = [];
    for (const [term, weight] of weights) {
      const id = this.termId(term);
      if (id >= 0) terms.push({ id, weight, term });
    }
    const range = shardRange(0, this.chunkCount, shard);
    const query = { segment: this, terms, stats, eligible, eligibleShare: eligible ? eligibleShare : 1, limit, range };
    const prune = strategy === "auto" ? prunes(this.termDf, terms, this.chunkCount, query.eligibleShare) : strategy === "max-score";
    return hitsBySlot((prune ? maxScoreSearch : denseSumSearch)(query), this.rowids);
  }
}
