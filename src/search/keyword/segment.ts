// A keyword segment opened by memory-mapping its file (format in segment-format.ts): opening reads only
// the header, and the dictionary is searched in place (binary search over the sorted term bytes), so a
// segment of a million chunks costs no parsing and no heap beyond what a search touches.
import { join } from "node:path";
import type { KeywordHit, KeywordStats } from "./bm25.ts";
import { decodeHeader, KEYWORD_SEGMENT_FILE, type Section, type SegmentHeader } from "./segment-format.ts";
import type { PostingSource } from "./posting-cursor.ts";
import { maxScoreSearch } from "./max-score.ts";
import { shardRange, WHOLE, type Shard } from "../shard.ts";

const utf8 = new TextEncoder();

/**
 * Queries with more distinct terms are scored without MaxScore pruning: a paragraph-long query's top
 * chunks match dozens of its terms, so pruning skips little and its per-candidate lookups cost more than
 * they save. Measured on a 500,000-chunk shard of bench:scale with the first 200 evaluation queries: p95
 * 20.3 ms pruned, 17.6 ms with this cut (the 116-term query: 45 -> 30 ms), short queries unchanged.
 */
const PRUNE_UP_TO_TERMS = 30;

export class KeywordSegment implements PostingSource {
  readonly chunkCount: number;
  readonly totalLength: number;
  readonly rowids: Uint32Array;
  readonly lengths: Uint32Array;
  readonly postingWords: Uint32Array;
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
    this.postingWords = view(Uint32Array, "postings", header.postingsBytes / 4);
    this.termBytes = view(Uint8Array, "termBytes", header.termBytesLength);
    this.termStarts = view(Uint32Array, "termStarts", termCount + 1);
    this.termBlocks = view(Uint32Array, "termBlocks", termCount + 1);
    this.termDf = view(Uint32Array, "termDf", termCount);
    this.blockLast = view(Uint32Array, "blockLast", blockCount);
    this.blockOffset = view(Uint32Array, "blockOffset", blockCount);
    this.blockMaxTf = view(Uint16Array, "blockMaxTf", blockCount);
    this.blockMinLen = view(Uint16Array, "blockMinLen", blockCount);
  }

  /** Maps `dir`/keyword.seg; the mapping lives as long as the object (the file may be deleted meanwhile). */
  static open(dir: string): KeywordSegment {
    const path = join(dir, KEYWORD_SEGMENT_FILE);
    const bytes = Bun.mmap(path);
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
   * be returned. Pruned (MaxScore, up to PRUNE_UP_TO_TERMS terms) but exact: the same chunks and scores
   * as scoring every posting.
   * `shard` searches only that share of the chunks (see shard.ts); `exhaustive` turns
   * pruning off (for benchmarks).
   */
  search(
    weights: Map<string, number>,
    stats: KeywordStats,
    eligible: Uint8Array | null,
    limit: number,
    { exhaustive = false, shard = WHOLE }: { exhaustive?: boolean; shard?: Shard } = {},
  ): KeywordHit[] {
    if (limit <= 0 || this.chunkCount === 0) return [];
    const terms: { id: number; weight: number; term: string }[] = [];
    for (const [term, weight] of weights) {
      const id = this.termId(term);
      if (id >= 0) terms.push({ id, weight, term });
    }
    const prune = !exhaustive && terms.length <= PRUNE_UP_TO_TERMS;
    return maxScoreSearch(this, terms, stats, eligible, limit, !prune, shardRange(0, this.chunkCount, shard));
  }
}
