// The search indexes of the knowledge bases in use, one KbIndex each, within a memory budget: when their
// in-memory parts (documents, deltas) add up to more than the budget, the least recently used are let go
// (their segments stay on disk and reopen quickly). It also runs the index worker, swapping each segment it
// publishes into the knowledge base's index, and the search threads (segment-searcher.ts).
import type { Db } from "../store/db.ts";
import { KbIndex } from "./kb-index.ts";
import { SegmentBuilds, type SegmentBuilt } from "./segment-builds.ts";
import type { IndexWorkerSettings } from "./index-worker-protocol.ts";
import { SegmentSearcher } from "./segment-searcher.ts";

export interface IndexCacheOptions {
  db: Db;
  dataDir: string;
  databasePath: string;
  dimension: number;
  /** Budget for the in-memory parts of all knowledge bases' indexes. */
  memoryBudgetBytes: number;
  /** See IndexWorkerSettings. */
  segmentMinChanges: number;
}

const SEGMENT_GROWTH = 0.1;
const WORKER_POLL_MS = 2_000;

export class IndexCache {
  private readonly indexes = new Map<string, KbIndex>();
  private readonly builds: SegmentBuilds;
  private readonly searcher: SegmentSearcher;

  constructor(private readonly options: IndexCacheOptions) {
    const settings: IndexWorkerSettings = {
      dataDir: options.dataDir,
      databasePath: options.databasePath,
      dimension: options.dimension,
      minChanges: options.segmentMinChanges,
      growth: SEGMENT_GROWTH,
      pollMs: WORKER_POLL_MS,
    };
    this.builds = new SegmentBuilds(settings, (built) => this.adopt(built));
    this.searcher = new SegmentSearcher(options.dataDir, options.dimension);
  }

  /** Starts the index worker (folds piled-up changes into segments in the background) and the search threads. */
  start(): void {
    this.builds.start();
    this.searcher.start();
  }

  async stop(): Promise<void> {
    await this.builds.stop();
    for (const index of this.indexes.values()) index.close();
    this.indexes.clear();
    this.searcher.stop();
  }

  /** How many knowledge bases' indexes are in memory. */
  get loaded(): number {
    return this.indexes.size;
  }

  /** The knowledge base's index, up to date with the database (or catching up, see KbIndex). */
  get(kbId: string): KbIndex {
    let index = this.indexes.get(kbId);
    if (index) {
      // Most recently used last, so eviction takes from the front.
      this.indexes.delete(kbId);
      this.indexes.set(kbId, index);
    } else {
      index = new KbIndex(this.options.db, this.options.dataDir, kbId, this.options.dimension, this.searcher);
      this.indexes.set(kbId, index);
    }
    index.refresh();
    if (index.deltaSize >= this.options.segmentMinChanges) this.builds.nudge();
    this.enforceBudget(index);
    return index;
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

  private enforceBudget(keep: KbIndex): void {
    let total = 0;
    for (const index of this.indexes.values()) total += index.estimatedBytes;
    for (const [kbId, index] of this.indexes) {
      if (total <= this.options.memoryBudgetBytes) break;
      if (index === keep) continue;
      total -= index.estimatedBytes;
      index.close();
      this.indexes.delete(kbId);
    }
  }
}
