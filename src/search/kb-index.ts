// One knowledge base's search index: its latest on-disk segment (built by the index worker, memory-mapped,
// see segment-builder.ts) plus a delta in memory: the chunks written since the segment's watermark, read
// from the change log (index-log.ts), and tombstones for the segment's chunks deleted since. A search
// scores the segment and the delta with the same combined statistics and merges their hits.
//
// The log is applied in slices of at most APPLY_SLICE_MS, so catching up on a big backlog (a bulk import,
// a first start after an upgrade) never holds the HTTP thread for long: other requests run between the
// slices, searches of this knowledge base wait for the last one (caughtUp), and the index worker meanwhile
// folds the backlog into a new segment.
import { join } from "node:path";
import type { Db } from "../store/db.ts";
import { KbDocuments, type Eligibility } from "./kb-documents.ts";
import { readLog } from "./index-log.ts";
import { latestSegment, newerSegments, SEGMENTS_KEPT, type PublishedSegment } from "./segment-files.ts";
import { parseMeta, SEGMENT_FILES } from "./vector/segment-files.ts";
import { lookupTableBytes } from "./vector/pq.ts";
import { StoredVectors } from "./stored-vectors.ts";
import { DeltaVectors } from "./delta-vectors.ts";
import { mergeHits, type RowidHit } from "./rowid-hit.ts";
import { copyMask, newMask } from "./mask.ts";
import type { DocumentPredicate } from "./filters.ts";
import { KeywordIndex, KeywordSegment, queryTermWeights, type KeywordStats } from "./keyword/index.ts";
import type { SegmentSearcher } from "./segment-searcher.ts";
import { knowledgeBaseLive } from "../store/knowledge-bases.ts";
import { nextSearch, type SearchSide } from "./search-order.ts";
import { isGone } from "../file-errors.ts";

/** Where a published segment is and the last change it holds. */
type SegmentPlace = Pick<PublishedSegment, "dir" | "watermark">;

const APPLY_SLICE_MS = 20;
const APPLY_BATCH = 500;
/** Past this many delta chunks the rest waits for the next segment (bounded memory during a bulk import). */
const DELTA_CAP = 200_000;
/** Heap taken by a delta chunk's postings, roughly (~90 distinct terms of 8 bytes, map overhead). */
const KEYWORD_BYTES_PER_CHUNK = 1_000;
/** Listings of the segments read before a removal under way is reported (each finds a newer segment or none). */
const OPEN_ATTEMPTS = 3;

interface OpenSegment {
  /** Read here for its statistics (through the mapping the search threads view too); searched, like the vector side, on the search threads (segment-searcher.ts). */
  keyword: KeywordSegment;
  keywordDir: string;
  vectorDir: string;
  watermark: number;
  /** What each search thread holds of the vector segment outside its mapped files: the lists' centroids and the quantizer's codebooks (vector/list-ranker.ts, vector/pq.ts). */
  threadBytes: number;
}

/**
 * What an open index holds whatever its size (its objects, maps and keyword structures): ~27 KB of RSS
 * per one-chunk knowledge base, measured over 3,000 of them.
 */
const OPEN_INDEX_BYTES = 32 * 1024;

export class KbIndex {
  private readonly documents: KbDocuments;
  private segment: OpenSegment | null = null;
  private deltaKeyword = new KeywordIndex();
  private deltaVectors: DeltaVectors;
  /** Rowids deleted since the segment's watermark: never returned from the segment. */
  private tombstones = new Set<number>();
  /** All the segment's chunks less the tombstones; dropped whenever a tombstone is added. */
  private liveMask: Uint8Array | null = null;
  private segmentMaxRowid = 0;
  private appliedSeq = 0;
  /** Set while a backlog of logged changes is being applied, a slice at a time. */
  private catchUp?: Timer;
  /** Searches waiting for the backlog (caughtUp). */
  private waiting: (() => void)[] = [];
  /** Let go by the index cache (memory budget, stop): a search still holding it gets a new one. */
  closed = false;

  constructor(
    private readonly db: Db,
    private readonly dataDir: string,
    readonly kbId: string,
    private readonly dimension: number,
    private readonly searcher: SegmentSearcher,
  ) {
    this.documents = new KbDocuments(db, kbId);
    this.deltaVectors = new DeltaVectors(dimension);
    this.openLatest();
  }

  get deltaSize(): number {
    return this.deltaVectors.size;
  }

  /** The watermark of the segment searched beside the delta, or null without one. */
  get segmentWatermark(): number | null {
    return this.segment?.watermark ?? null;
  }

  /** Brings the documents and the delta up to date (the delta within the time slice). */
  refresh(): void {
    this.documents.refresh();
    this.applyLog();
  }

  /**
   * Resolves once the delta holds every change logged so far, so that a search finds every chunk of every
   * ready document (right after a bulk import, a search that applied only its own slice missed some). The
   * backlog is applied in slices with other requests running between them. A delta at DELTA_CAP resolves at
   * once: the rest waits for the next segment.
   */
  caughtUp(): Promise<void> {
    if (this.catchUp === undefined) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /**
   * Swaps in a newly published segment; the delta restarts from its watermark. A segment the index worker
   * removed before it got here (two newer ones were published meanwhile, or the knowledge base is being
   * deleted) is passed over: the index keeps what it has, and the newer segments follow.
   */
  adopt(published: SegmentPlace): void {
    if (this.segment && published.watermark <= this.segment.watermark) return;
    try {
      this.open(published);
    } catch (error) {
      if (isGone(error)) return;
      throw error;
    }
    this.applyLog();
  }

  eligibility(predicate: DocumentPredicate | null, filterKey?: string): Promise<Eligibility> {
    return this.documents.eligibility(predicate, filterKey);
  }

  /** `side`: the search's place in the search threads' order, and whether the vector side runs at the same time (segment-searcher.ts). */
  async keywordSearch(query: string, { mask: eligible, count: eligibleCount }: Eligibility, limit: number, side: SearchSide = nextSearch(false)): Promise<RowidHit[]> {
    const weights = queryTermWeights(query);
    if (weights.size === 0) return [];
    const segment = this.segment;
    const delta = this.deltaKeyword;
    const segmentChunks = segment?.keyword.chunkCount ?? 0;
    const liveChunks = Math.max(0, segmentChunks - this.tombstones.size) + delta.chunkCount;
    if (liveChunks === 0) return [];
    // BM25's statistics count the chunks deleted from the segment until it is rebuilt, as its document
    // frequencies and lengths do (Lucene counts deleted documents until a merge alike): with the count
    // alone lowered, a term in more chunks than were left got a logarithm of a negative number as its
    // IDF, so its matches scored 0 or were pruned away.
    const chunkCount = segmentChunks + delta.chunkCount;
    const documentFrequencies = new Map<string, number>();
    for (const term of weights.keys()) documentFrequencies.set(term, (segment?.keyword.documentFrequency(term) ?? 0) + delta.documentFrequency(term));
    const averageLength = ((segment?.keyword.totalLength ?? 0) + delta.totalLength) / chunkCount || 1;
    const stats: KeywordStats = { chunkCount, averageLength, documentFrequency: (term) => documentFrequencies.get(term) ?? 0 };
    const fromDelta = delta.search(weights, stats, eligible, limit);
    if (!segment) return fromDelta;
    const eligibleShare = eligible ? eligibleCount / liveChunks : 1;
    const keywordQuery = { terms: [...weights], chunkCount, averageLength, documentFrequencies: [...documentFrequencies], eligibleShare };
    const fromSegment = await this.searcher.keyword(segment.keywordDir, keywordQuery, this.segmentMask(eligible), limit, side);
    return mergeHits([fromSegment, fromDelta], limit);
  }

  /** `side`: the search's place in the search threads' order, and whether the keyword side runs at the same time (segment-searcher.ts). */
  async vectorSearch(query: Float32Array, scope: Eligibility, limit: number, side: SearchSide = nextSearch(false)): Promise<RowidHit[]> {
    const fromDelta = this.deltaVectors.search(query, scope.mask, limit);
    const segment = this.segment;
    if (!segment) return fromDelta;
    const fromSegment = await this.searcher.vector(segment.vectorDir, query, this.segmentMask(scope.mask), scope.count, limit, side);
    return mergeHits([fromSegment, fromDelta], limit);
  }

  /** Rough heap size (the segment is memory-mapped, paged in and out by the OS), for the memory budget. */
  get estimatedBytes(): number {
    return (
      OPEN_INDEX_BYTES +
      this.documents.estimatedBytes +
      this.deltaVectors.estimatedBytes +
      this.deltaKeyword.chunkCount * KEYWORD_BYTES_PER_CHUNK +
      this.tombstones.size * 16 +
      (this.liveMask?.byteLength ?? 0) +
      (this.segment?.threadBytes ?? 0) * this.searcher.threadCount
    );
  }

  close(): void {
    this.closed = true;
    this.settle();
    if (this.segment) this.closeSegment(this.segment);
    this.segment = null;
  }

  private closeSegment(segment: OpenSegment): void {
    void this.searcher.close(segment.keywordDir);
    void this.searcher.close(segment.vectorDir);
  }

  /** The eligibility for the segment's chunks: `eligible` less the tombstones. */
  private segmentMask(eligible: Uint8Array | null): Uint8Array | null {
    if (this.tombstones.size === 0) return eligible;
    if (!eligible) return (this.liveMask ??= this.withoutTombstones(newMask(this.segmentMaxRowid + 1).fill(1)));
    return this.withoutTombstones(copyMask(eligible));
  }

  private withoutTombstones(mask: Uint8Array): Uint8Array {
    for (const rowid of this.tombstones) if (rowid < mask.length) mask[rowid] = 0;
    return mask;
  }

  /**
   * Opens the newest published segment, if any. The index worker may remove it between the listing and the
   * opening: newer segments were published meanwhile (the listing is read again), or the knowledge base is
   * being deleted (its index stays empty: none of its documents is searchable any more).
   */
  private openLatest(): void {
    for (let attempt = 1; ; attempt++) {
      try {
        const published = latestSegment(this.dataDir, this.kbId);
        if (published) this.open(published);
        return;
      } catch (error) {
        if (!isGone(error)) throw error;
        if (!knowledgeBaseLive(this.db, this.kbId)) return;
        if (attempt === OPEN_ATTEMPTS) throw error;
      }
    }
  }

  private open(published: SegmentPlace): void {
    const previous = this.segment;
    const keywordDir = `${published.dir}/keyword`;
    const vectorDir = `${published.dir}/vector`;
    const held: string[] = [];
    let keyword: KeywordSegment;
    let perThread: number;
    try {
      for (const dir of [keywordDir, vectorDir]) {
        this.searcher.open(dir);
        held.push(dir);
      }
      // The index worker removes a segment only once two newer ones are published, or once its knowledge
      // base is marked deleted: if neither holds after the mapping, every file was there to be mapped. Else
      // some may have been removed before they were listed, and the segment is passed over as gone.
      if (!knowledgeBaseLive(this.db, this.kbId) || newerSegments(this.dataDir, this.kbId, published.watermark) >= SEGMENTS_KEPT) {
        throw Object.assign(new Error(`Search segment ${published.dir} is being removed`), { code: "ENOENT" });
      }
      keyword = KeywordSegment.open(keywordDir, (path) => this.searcher.mapping(path));
      perThread = threadBytes(this.searcher.mapping(join(vectorDir, SEGMENT_FILES.meta)), vectorDir, this.dimension);
    } catch (error) {
      for (const dir of held) void this.searcher.close(dir);
      throw error;
    }
    this.segment = { keyword, keywordDir, vectorDir, watermark: published.watermark, threadBytes: perThread };
    if (previous) this.closeSegment(previous);
    this.deltaKeyword = new KeywordIndex();
    this.deltaVectors = new DeltaVectors(this.dimension);
    this.tombstones = new Set();
    this.liveMask = null;
    this.segmentMaxRowid = this.segment.keyword.rowids.at(-1) ?? 0;
    this.appliedSeq = published.watermark;
  }

  /** Applies logged changes after appliedSeq for up to APPLY_SLICE_MS; schedules the rest. */
  private applyLog(): void {
    clearTimeout(this.catchUp);
    const deadline = performance.now() + APPLY_SLICE_MS;
    for (;;) {
      const entries = this.deltaVectors.size >= DELTA_CAP ? [] : readLog(this.db, this.kbId, this.appliedSeq, APPLY_BATCH);
      if (entries.length === 0) return this.settle();
      // One per batch of the log: a block of vectors it read holds every vector of the changes logged before
      // the batch was read, but not those written into the same block since, which the next batch may log
      // (kept for the whole slice, chunks of documents that became ready meanwhile were given zero vectors).
      let vectors: StoredVectors | null = null;
      for (const entry of entries) {
        if (entry.added) {
          const text = this.db.query<{ text: string }, [number]>("SELECT text FROM chunks WHERE rowid = ?").get(entry.rowid)?.text;
          // A chunk deleted again later in the log is simply skipped here; its deletion follows.
          if (text !== undefined) {
            this.deltaKeyword.remove(entry.rowid);
            this.deltaKeyword.add(entry.rowid, text);
            this.deltaVectors.add(entry.rowid, (vectors ??= new StoredVectors(this.db, this.dimension)).read(entry.rowid));
          }
        } else {
          this.tombstones.add(entry.rowid);
          this.liveMask = null;
          this.deltaKeyword.remove(entry.rowid);
          this.deltaVectors.remove(entry.rowid);
        }
        this.appliedSeq = entry.seq;
        // Checked per entry: a batch of 500 chunks of ~1 KB took ~60 ms to take in, past the slice.
        if (performance.now() > deadline) break;
      }
      if (performance.now() > deadline) break;
    }
    this.catchUp = setTimeout(() => {
      try {
        this.applyLog();
      } catch (error) {
        console.error(`search index ${this.kbId}: applying logged changes failed (${(error as Error).message}); the next search retries`);
        this.settle();
      }
    }, 0);
  }

  /** The backlog is applied (or can go no further): no slice scheduled, and waiting searches go on. */
  private settle(): void {
    clearTimeout(this.catchUp);
    this.catchUp = undefined;
    for (const resume of this.waiting.splice(0)) resume();
  }
}

/** A search thread's copy of the segment's list centroids (f32) and their scores (f64), made at its first search. */
function threadBytes(meta: Uint8Array, vectorDir: string, dimension: number): number {
  try {
    const { lists } = parseMeta(meta, vectorDir, dimension);
    return lists > 1 ? lists * (dimension * Float32Array.BYTES_PER_ELEMENT + Float64Array.BYTES_PER_ELEMENT) + lookupTableBytes(dimension) : 0;
  } catch {
    return 0; // an unreadable segment is reported by its first search
  }
}
