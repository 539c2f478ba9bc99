// The search indexes of the knowledge bases in use, one KbIndex each, within a memory budget: when their
// in-memory parts (documents, deltas) add up to more than the budget, the least recently used are let go
// (their segments stay on disk and reopen quickly). It also runs the index worker, swapping each segment it
// publishes into the knowledge base's index, and the search threads (segment-searcher.ts).
import type { Db } from "../store/db.ts";
import { KbIndex } from "./kb-index.ts";
import { SegmentBuilds, type SegmentBuilt } from "./segment-builds.ts";
import type { IndexWorkerSettings } from "./index-worker-protocol.ts";
import { SegmentSearcher } from "./segment-searcher.ts";
import { knowledgeBaseLive, liveKnowledgeBaseIds } from "../store/knowledge-bases.ts";
import { withPendingChanges } from "./index-log.ts";

export interface IndexCacheOptions {
  db: Db;
  dataDir: string;
  databasePath: string;
  dimension: number;
  /** Budget for the in-memory parts of all knowledge bases' indexes. */
  memoryBudgetBytes: number;
  /** See IndexWorkerSettings. */
  segmentMinChanges: number;
  /** See IndexWorkerSettings.quietMs (default SEGMENT_QUIET_MS). */
  segmentQuietMs?: number;
  /** The search threads, when started before the cache (the server starts them before the models have loaded). */
  searcher?: SegmentSearcher;
}

const SEGMENT_GROWTH = 0.1;
const WORKER_POLL_MS = 2_000;
/**
 * Changes that stopped coming this long ago are folded into a segment even when they are few beside the
 * knowledge base's size. Replaying the log costs ~0.1 ms a change (46k chunks, 2 cores: ~4,000 changes held
 * the first search after a start 400 ms), and 10 % of a million chunks would hold it for ~10 s.
 */
const SEGMENT_QUIET_MS = 60_000;
/**
 * Documents that became ready are taken into the index together, this long after the first of them: one
 * at a time, each cost ~2 ms of fixed work (the documents' refresh, a 512 KB block of stored vectors read
 * for one chunk), which slowed a bulk import of 1,398 documents from ~12 to ~15 s.
 */
const WARM_AFTER_MS = 250;
/** Knowledge bases whose backlog a start checks per turn of the event loop (warmBacklogs). */
const BACKLOG_CHECK_SLICE = 200;

export class IndexCache {
  /** Least recently used first. */
  private indexes = new Map<string, KbIndex>();
  private readonly builds: SegmentBuilds;
  private readonly searcher: SegmentSearcher;
  private stopped = false;
  /** Knowledge bases with documents ready since the last warm-up, and when the next one runs. */
  private readonly toWarm = new Set<string>();
  private warmTimer: Timer | undefined;

  constructor(private readonly options: IndexCacheOptions) {
    const settings: IndexWorkerSettings = {
      dataDir: options.dataDir,
      databasePath: options.databasePath,
      dimension: options.dimension,
      minChanges: options.segmentMinChanges,
      growth: SEGMENT_GROWTH,
      quietMs: options.segmentQuietMs ?? SEGMENT_QUIET_MS,
      pollMs: WORKER_POLL_MS,
    };
    this.builds = new SegmentBuilds(settings, (built) => this.adopt(built));
    this.searcher = options.searcher ?? new SegmentSearcher(options.dataDir);
  }

  /**
   * Starts the index worker (folds piled-up changes into segments in the background) and the search threads,
   * and takes in the knowledge bases' long backlogs (warmBacklogs).
   */
  start(): void {
    this.builds.start();
    this.searcher.start();
    this.warmBacklogs();
  }

  /**
   * Right after a start, the knowledge bases with at least segmentMinChanges changes beyond their segment are
   * taken in (warm: within the memory budget, in time slices), BACKLOG_CHECK_SLICE knowledge bases checked per
   * turn of the event loop. Their first search would otherwise replay those changes first, ~0.1 ms each: a
   * restart during a bulk import leaves up to 10 % of a knowledge base outside its segment (at 1M chunks,
   * 100k changes, ~10 s). Now a search waits only for what is left of the replay when it comes. Checking
   * 8,000 knowledge bases of 14 logged changes each took 74 ms in all, at most 3.9 ms a turn.
   */
  private warmBacklogs(): void {
    const kbIds = liveKnowledgeBaseIds(this.options.db);
    const check = (from: number) => {
      if (this.stopped || from >= kbIds.length) return;
      const slice = kbIds.slice(from, from + BACKLOG_CHECK_SLICE);
      for (const kbId of withPendingChanges(this.options.db, slice, this.options.segmentMinChanges)) this.warm(kbId);
      setTimeout(() => check(from + BACKLOG_CHECK_SLICE), 0).unref();
    };
    setTimeout(() => check(0), 0).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.warmTimer);
    await this.builds.stop();
    for (const index of this.indexes.values()) index.close();
    this.indexes.clear();
    this.searcher.stop();
  }

  /** How many knowledge bases' indexes are in memory. */
  get loaded(): number {
    return this.indexes.size;
  }

  /** The estimated memory of their in-memory parts, which the budget bounds. */
  get memoryBytes(): number {
    return this.estimatedBytes();
  }

  get memoryBudgetBytes(): number {
    return this.options.memoryBudgetBytes;
  }

  /** The knowledge base's index, up to date with the database (or catching up, see KbIndex). */
  get(kbId: string): KbIndex {
    let index = this.indexes.get(kbId);
    if (index) {
      this.indexes.delete(kbId);
      this.indexes.set(kbId, index);
    } else {
      index = this.open(kbId);
      this.indexes.set(kbId, index);
    }
    this.takeChanges(index);
    return index;
  }

  /** Whether the knowledge base's index is in memory. */
  has(kbId: string): boolean {
    return this.indexes.has(kbId);
  }

  /**
   * Takes in the changes of documents that just became ready in the knowledge base, so that its next search
   * does not apply them first (the first search after 1,398 documents of the cran collection became ready
   * took ~0.3 s, applying their 1,555 chunks; later ones 5-12 ms). They are applied WARM_AFTER_MS later,
   * with those of the documents ready meanwhile, in the index's time slices as a search's would be. An
   * index not in memory is loaded only while the budget has room, and as the least recently used, so that
   * loading it never pushes out an index that searches use.
   */
  warm(kbId: string): void {
    if (this.stopped) return;
    this.toWarm.add(kbId);
    if (this.warmTimer) return;
    this.warmTimer = setTimeout(() => {
      this.warmTimer = undefined;
      const kbIds = [...this.toWarm];
      this.toWarm.clear();
      for (const id of kbIds) this.warmNow(id);
    }, WARM_AFTER_MS);
    this.warmTimer.unref();
  }

  private warmNow(kbId: string): void {
    try {
      const loaded = this.indexes.get(kbId);
      if (loaded) return this.takeChanges(loaded);
      const inUse = this.estimatedBytes();
      if (inUse >= this.options.memoryBudgetBytes || !knowledgeBaseLive(this.options.db, kbId)) return;
      const index = this.open(kbId);
      index.refresh();
      if (inUse + index.estimatedBytes > this.options.memoryBudgetBytes) return index.close();
      // Least recently used first: the next eviction takes it before any index a search used.
      this.indexes = new Map([[kbId, index], ...this.indexes]);
      this.nudgeIfDue(index);
    } catch (error) {
      // The next search of the knowledge base applies the changes (and reports what fails).
      console.error(`search index ${kbId}: taking in newly ready documents failed (${(error as Error).message})`);
    }
  }

  private open(kbId: string): KbIndex {
    return new KbIndex(this.options.db, this.options.dataDir, kbId, this.options.dimension, this.searcher);
  }

  /** Brings a loaded index up to date (see KbIndex.refresh) and the others within the budget, letting the least recently used go. */
  private takeChanges(index: KbIndex): void {
    index.refresh();
    this.nudgeIfDue(index);
    this.enforceBudget(index);
  }

  /** Wakes the index worker when the index's delta has grown enough for a new segment. */
  private nudgeIfDue(index: KbIndex): void {
    if (index.deltaSize >= this.options.segmentMinChanges) this.builds.nudge();
  }

  /** Lets a deleted knowledge base's index go; the index worker removes its files at its next check. */
  forget(kbId: string): void {
    this.indexes.get(kbId)?.close();
    this.indexes.delete(kbId);
    this.builds.nudge();
  }

  /** Called by the index worker's messages: a segment that cannot be opened is reported, never thrown (it would end the process). */
  private adopt(built: SegmentBuilt): void {
    try {
      this.indexes.get(built.kbId)?.adopt(built);
    } catch (error) {
      console.error(`search index ${built.kbId}: taking in the new segment ${built.dir} failed (${(error as Error).message})`);
    }
  }

  private estimatedBytes(): number {
    let total = 0;
    for (const index of this.indexes.values()) total += index.estimatedBytes;
    return total;
  }

  private enforceBudget(keep: KbIndex): void {
    let total = this.estimatedBytes();
    for (const [kbId, index] of this.indexes) {
      if (total <= this.options.memoryBudgetBytes) break;
      if (index === keep) continue;
      total -= index.estimatedBytes;
      index.close();
      this.indexes.delete(kbId);
    }
  }
}
