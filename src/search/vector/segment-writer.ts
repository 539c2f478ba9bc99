// Writes a vector segment (segment.ts) into a directory the caller then renames into place. A segment is
// built from scratch, or from an open older segment plus the changes since: its graph is loaded, the
// removed rowids deleted from it and the new ones added, which for a few thousand changes to a large
// segment is much cheaper than rebuilding the graph (scripts/bench/vector-segment.ts). Runs off the HTTP
// thread (the index worker): building a graph takes seconds to minutes.
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { newHnsw, type Hnsw } from "./hnsw.ts";
import { quantize } from "./int8-codes.ts";
import type { VectorSegment } from "./segment.ts";
import { SEGMENT_FILES, writeMeta } from "./segment-files.ts";

export interface VectorRow {
  rowid: number;
  /** Unit length. */
  vector: Float32Array;
}

export interface SegmentBase {
  segment: VectorSegment;
  /** Rowids of the segment's chunks to leave out (deleted since it was built); unknown ones are ignored. */
  removed: Iterable<number>;
}

export interface SegmentBuild {
  count: number;
  /** Whether the graph was updated from the base segment's rather than built anew. */
  incremental: boolean;
}

/** Past this many deletions (as a share of the base) since the graph was built, it is built anew. */
const MAX_REMOVED_SHARE = 0.2;
/** Rows quantized, written and added to the graph at a time. */
const BATCH = 8192;

/** Appends typed arrays to the side files and their codes to the graph, a batch at a time. */
class SlotWriter {
  private readonly rowids = new Int32Array(BATCH);
  private readonly codes: Int8Array;
  private readonly scales = new Float32Array(BATCH);
  private readonly graphKeys = new BigUint64Array(BATCH);
  private readonly graphCodes: Int8Array;
  private size = 0;
  private graphSize = 0;
  private readonly files: { rowids: number; codes: number; scales: number };
  count = 0;
  lastRowid = 0;

  constructor(
    dir: string,
    private readonly dimension: number,
    private readonly graph: Hnsw,
  ) {
    this.codes = new Int8Array(BATCH * dimension);
    this.graphCodes = new Int8Array(BATCH * dimension);
    const open = (name: string) => openSync(join(dir, name), "w");
    this.files = { rowids: open(SEGMENT_FILES.rowids), codes: open(SEGMENT_FILES.codes), scales: open(SEGMENT_FILES.scales) };
  }

  /** Adds a slot; `codes` (already quantized) or `vector` gives its vector. */
  push(rowid: number, toGraph: boolean, codes: Int8Array | null, scale: number, vector: Float32Array | null): void {
    if (!Number.isInteger(rowid) || rowid <= this.lastRowid || rowid >= 2 ** 31) {
      throw new Error(`Vector segment rows must have ascending positive rowids below 2^31 (got ${rowid} after ${this.lastRowid})`);
    }
    const offset = this.size * this.dimension;
    if (vector) {
      if (vector.length !== this.dimension) throw new Error(`Chunk ${rowid} has a ${vector.length}-d vector, not ${this.dimension}-d`);
      scale = quantize(vector, this.codes, offset);
    } else this.codes.set(codes!, offset);
    this.rowids[this.size] = rowid;
    this.scales[this.size] = scale;
    if (toGraph) {
      this.graphKeys[this.graphSize] = BigInt(rowid);
      this.graphCodes.set(this.codes.subarray(offset, offset + this.dimension), this.graphSize * this.dimension);
      this.graphSize++;
    }
    this.size++;
    this.count++;
    this.lastRowid = rowid;
    if (this.size === BATCH) this.flush();
  }

  flush(): void {
    if (this.graphSize > 0) {
      this.graph.add(this.graphKeys.subarray(0, this.graphSize), this.graphCodes.subarray(0, this.graphSize * this.dimension), availableParallelism());
    }
    writeSync(this.files.rowids, this.rowids.subarray(0, this.size));
    writeSync(this.files.codes, this.codes.subarray(0, this.size * this.dimension));
    writeSync(this.files.scales, this.scales.subarray(0, this.size));
    this.size = 0;
    this.graphSize = 0;
  }

  close(): void {
    this.flush();
    for (const fd of Object.values(this.files)) closeSync(fd);
  }
}

/**
 * Writes the segment of `rows` (ascending rowid) into `dir`, plus, when `base` is given, the base
 * segment's chunks except the removed ones (`rows` then holds only chunks the base does not have).
 */
export function writeVectorSegment(dir: string, rows: Iterable<VectorRow>, dimension: number, base?: SegmentBase): SegmentBuild {
  mkdirSync(dir, { recursive: true });
  const removed = new Set(base?.removed ?? []);
  const old = base?.segment;
  const gone = old ? [...removed].filter((rowid) => old.slotOf(rowid) >= 0) : [];
  const graphRemovals = old ? old.graphRemovals + gone.length : 0;
  const incremental = !!old && old.count > 0 && graphRemovals <= MAX_REMOVED_SHARE * old.count;
  const graph = newHnsw(dimension);
  if (incremental) {
    graph.load(join(old.dir, SEGMENT_FILES.hnsw));
    if (gone.length > 0) graph.remove(BigUint64Array.from(gone, BigInt));
  }
  const writer = new SlotWriter(dir, dimension, graph);
  try {
    let slot = 0;
    const oldCount = old?.count ?? 0;
    /** Copies the base's kept slots whose rowid is below `until`. */
    const copyOldBefore = (until: number) => {
      for (; slot < oldCount && old!.rowids[slot] < until; slot++) {
        const rowid = old!.rowids[slot];
        if (removed.has(rowid)) continue;
        const codes = old!.codes.subarray(slot * dimension, (slot + 1) * dimension);
        writer.push(rowid, !incremental, codes, old!.scales[slot], null);
      }
    };
    for (const row of rows) {
      copyOldBefore(row.rowid);
      writer.push(row.rowid, true, null, 0, row.vector);
    }
    copyOldBefore(Infinity);
  } finally {
    writer.close();
  }
  if (writer.count > 0) graph.save(join(dir, SEGMENT_FILES.hnsw));
  writeMeta(dir, { dimension, count: writer.count, graphRemovals: incremental ? graphRemovals : 0 });
  return { count: writer.count, incremental };
}
