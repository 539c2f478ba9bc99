// Writes a vector segment (segment.ts) into a directory the caller then renames into place. A segment is
// built from scratch, or from an open older segment plus the changes since: the older one's codes are
// copied (without the removed chunks) and keep their lists and product-quantized codes, and only the new
// chunks are assigned to the nearest of its centroids and encoded, so a few thousand changes to a large
// segment cost seconds. The centroids and the quantizer are trained anew once the segment has doubled or
// halved since they were. Runs off the HTTP thread (the
// index worker): training, assigning and encoding a million vectors takes about a minute.
import { closeSync, mkdirSync, openSync, readFileSync, readSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { assignLists, listCount, trainCoarseQuantizer, trainingSize, type CoarseQuantizer } from "./ivf.ts";
import { blockedLength, copyBlockedCode, setBlockedCode } from "./pq-blocks.ts";
import { ProductQuantizer } from "./pq.ts";
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
  lists: number;
  /** Whether the centroids were trained for this segment rather than taken from the base's. */
  trained: boolean;
}

export interface WriteOptions {
  /** The number of lists when the centroids are trained (default: listCount(count)); for tests and benchmarks. */
  lists?: number;
}

/** Rows quantized and written at a time. */
const BATCH = 8192;
/** The centroids are trained anew once the segment is this many times larger or smaller than when they were. */
const RETRAIN_FACTOR = 2;

/** An Int32Array that grows by doubling. */
class Int32List {
  private values = new Int32Array(BATCH);
  length = 0;

  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Int32Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }

  view(): Int32Array {
    return this.values.subarray(0, this.length);
  }
}

/**
 * Appends slots to the per-slot files, a batch at a time, and keeps each slot's list (-1: not assigned
 * yet) and its slot in the base segment (-1: a new chunk).
 */
class SlotWriter {
  private readonly rowids = new Int32Array(BATCH);
  private readonly codes: Int8Array;
  private readonly scales = new Float32Array(BATCH);
  private size = 0;
  private readonly files: { rowids: number; codes: number; scales: number };
  readonly listOf = new Int32List();
  readonly baseSlotOf = new Int32List();
  count = 0;
  lastRowid = 0;

  constructor(
    dir: string,
    private readonly dimension: number,
  ) {
    this.codes = new Int8Array(BATCH * dimension);
    const open = (name: string) => openSync(join(dir, name), "w");
    this.files = { rowids: open(SEGMENT_FILES.rowids), codes: open(SEGMENT_FILES.codes), scales: open(SEGMENT_FILES.scales) };
  }

  /** Adds a slot: a new chunk's `vector`, or the base segment's slot `baseSlot` (codes, scale, list). */
  push(rowid: number, vector: Float32Array | null, base: { slot: number; codes: Int8Array; scale: number; list: number } | null): void {
    if (!Number.isInteger(rowid) || rowid <= this.lastRowid || rowid >= 2 ** 31) {
      throw new Error(`Vector segment rows must have ascending positive rowids below 2^31 (got ${rowid} after ${this.lastRowid})`);
    }
    const offset = this.size * this.dimension;
    if (vector) {
      if (vector.length !== this.dimension) throw new Error(`Chunk ${rowid} has a ${vector.length}-d vector, not ${this.dimension}-d`);
      this.scales[this.size] = quantize(vector, this.codes, offset);
    } else {
      this.codes.set(base!.codes, offset);
      this.scales[this.size] = base!.scale;
    }
    this.rowids[this.size] = rowid;
    this.listOf.push(base?.list ?? -1);
    this.baseSlotOf.push(base?.slot ?? -1);
    this.size++;
    this.count++;
    this.lastRowid = rowid;
    if (this.size === BATCH) this.flush();
  }

  flush(): void {
    writeSync(this.files.rowids, this.rowids.subarray(0, this.size));
    writeSync(this.files.codes, this.codes.subarray(0, this.size * this.dimension));
    writeSync(this.files.scales, this.scales.subarray(0, this.size));
    this.size = 0;
  }

  close(): void {
    this.flush();
    for (const fd of Object.values(this.files)) closeSync(fd);
  }
}

/**
 * The written slots read back from the segment's files: vectors (codes × scale) and rowids. The codes are
 * read with pread, not mapped: mapped pages count towards the server's RSS once touched, and assigning and
 * encoding touch all of them (~0.5 GB at 1M chunks), while the page cache they go through can be dropped.
 */
class WrittenVectors {
  private readonly codesFile: number;
  private readonly scales: Float32Array;
  private readonly rowids: Int32Array;

  constructor(
    dir: string,
    private readonly dimension: number,
    count: number,
  ) {
    this.codesFile = openSync(join(dir, SEGMENT_FILES.codes), "r");
    this.scales = new Float32Array(count);
    new Uint8Array(this.scales.buffer).set(readFileSync(join(dir, SEGMENT_FILES.scales)));
    this.rowids = new Int32Array(count);
    new Uint8Array(this.rowids.buffer).set(readFileSync(join(dir, SEGMENT_FILES.rowids)));
  }

  rowid(slot: number): number {
    return this.rowids[slot];
  }

  /** The vectors of `slots`, row after row; runs of consecutive slots are read at once. */
  read(slots: ArrayLike<number>): Float32Array {
    const d = this.dimension;
    const out = new Float32Array(slots.length * d);
    const codes = new Int8Array(slots.length * d);
    for (let i = 0; i < slots.length; ) {
      let run = 1;
      while (i + run < slots.length && slots[i + run] === slots[i] + run) run++;
      readSync(this.codesFile, codes, i * d, run * d, slots[i] * d);
      i += run;
    }
    for (let i = 0; i < slots.length; i++) {
      const scale = this.scales[slots[i]];
      for (let j = 0; j < d; j++) out[i * d + j] = codes[i * d + j] * scale;
    }
    return out;
  }

  close(): void {
    closeSync(this.codesFile);
  }
}

/** Assigns every slot whose list is -1 to its nearest centroid, a batch at a time. */
function assignRemaining(listOf: Int32Array, quantizer: CoarseQuantizer, vectors: WrittenVectors, dimension: number): void {
  const pending: number[] = [];
  const assign = () => {
    const lists = assignLists(quantizer, vectors.read(pending), dimension);
    pending.forEach((slot, i) => (listOf[slot] = lists[i]));
    pending.length = 0;
  };
  for (let slot = 0; slot < listOf.length; slot++) {
    if (listOf[slot] >= 0) continue;
    pending.push(slot);
    if (pending.length === BATCH) assign();
  }
  if (pending.length > 0) assign();
}

/**
 * The product-quantized codes of the slots in list order, blocked (pq-blocks.ts): copied from the base
 * segment for its slots when its quantizer is kept (`base`), encoded for the others, a batch at a time.
 */
function pqCodesByPosition(
  listSlots: Int32Array,
  baseSlotOf: Int32Array,
  pq: ProductQuantizer,
  vectors: WrittenVectors,
  base: { codes: Uint8Array; positionOf: Int32Array } | null,
): Uint8Array {
  const { codeBytes } = pq;
  const codes = new Uint8Array(blockedLength(listSlots.length, codeBytes));
  const pending: number[] = [];
  const encode = () => {
    const encoded = pq.encode(vectors.read(pending.map((position) => listSlots[position])));
    pending.forEach((position, i) => setBlockedCode(codes, position, encoded.subarray(i * codeBytes, (i + 1) * codeBytes)));
    pending.length = 0;
  };
  for (let position = 0; position < listSlots.length; position++) {
    const baseSlot = baseSlotOf[listSlots[position]];
    if (base && baseSlot >= 0) {
      copyBlockedCode(base.codes, base.positionOf[baseSlot], codes, position, codeBytes);
      continue;
    }
    pending.push(position);
    if (pending.length === BATCH) encode();
  }
  if (pending.length > 0) encode();
  return codes;
}

/** The slots grouped by list (a counting sort): listStarts has lists + 1 entries. */
function groupByList(listOf: Int32Array, lists: number): { listStarts: Int32Array; listSlots: Int32Array } {
  const listStarts = new Int32Array(lists + 1);
  for (const list of listOf) listStarts[list + 1]++;
  for (let list = 0; list < lists; list++) listStarts[list + 1] += listStarts[list];
  const next = listStarts.slice(0, lists);
  const listSlots = new Int32Array(listOf.length);
  for (let slot = 0; slot < listOf.length; slot++) listSlots[next[listOf[slot]]++] = slot;
  return { listStarts, listSlots };
}

function writeArray(dir: string, file: string, array: Int32Array | Float32Array): void {
  writeFileSync(join(dir, file), new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
}

/**
 * Writes the segment of `rows` (ascending rowid) into `dir`, plus, when `base` is given, the base
 * segment's chunks except the removed ones (`rows` then holds only chunks the base does not have).
 */
export function writeVectorSegment(dir: string, rows: Iterable<VectorRow>, dimension: number, base?: SegmentBase, options: WriteOptions = {}): SegmentBuild {
  mkdirSync(dir, { recursive: true });
  const removed = new Set(base?.removed ?? []);
  const old = base?.segment;
  const oldLists = old?.slotLists();
  const writer = new SlotWriter(dir, dimension);
  try {
    let slot = 0;
    const oldCount = old?.count ?? 0;
    /** Copies the base's kept slots whose rowid is below `until`. */
    const copyOldBefore = (until: number) => {
      for (; slot < oldCount && old!.rowids[slot] < until; slot++) {
        const rowid = old!.rowids[slot];
        if (removed.has(rowid)) continue;
        const codes = old!.codes.subarray(slot * dimension, (slot + 1) * dimension);
        writer.push(rowid, null, { slot, codes, scale: old!.scales[slot], list: oldLists![slot] });
      }
    };
    for (const row of rows) {
      copyOldBefore(row.rowid);
      writer.push(row.rowid, row.vector, null);
    }
    copyOldBefore(Infinity);
  } finally {
    writer.close();
  }
  const count = writer.count;
  if (count === 0) {
    writeMeta(dir, { dimension, count: 0, lists: 0, groups: 0, trainedCount: 0 });
    return { count: 0, lists: 0, trained: false };
  }
  const listOf = writer.listOf.view();
  const vectors = new WrittenVectors(dir, dimension, count);
  try {
    const keep = old && old.lists > 0 && count <= old.trainedCount * RETRAIN_FACTOR && count * RETRAIN_FACTOR >= old.trainedCount;
    let quantizer: CoarseQuantizer;
    let lists: number;
    let trainedCount: number;
    let pq: ProductQuantizer | null;
    if (keep) {
      ({ quantizer, lists, trainedCount, pq } = old);
    } else {
      lists = Math.min(count, options.lists ?? listCount(count));
      const size = trainingSize(lists, count);
      const sample = vectors.read(Int32Array.from({ length: size }, (_, i) => Math.floor((i * count) / size)));
      quantizer = trainCoarseQuantizer(sample, lists, dimension);
      // One list is scored exactly: nothing to rank approximately.
      pq = lists > 1 ? ProductQuantizer.train(sample, dimension) : null;
      trainedCount = count;
      listOf.fill(-1);
    }
    assignRemaining(listOf, quantizer, vectors, dimension);
    const { listStarts, listSlots } = groupByList(listOf, lists);
    writeArray(dir, SEGMENT_FILES.centroids, quantizer.centroids);
    writeArray(dir, SEGMENT_FILES.groups, quantizer.groups);
    writeArray(dir, SEGMENT_FILES.groupStarts, quantizer.groupStarts);
    writeArray(dir, SEGMENT_FILES.listStarts, listStarts);
    writeArray(dir, SEGMENT_FILES.listSlots, listSlots);
    writeArray(dir, SEGMENT_FILES.listRowids, listSlots.map((slot) => vectors.rowid(slot)));
    if (pq) {
      writeArray(dir, SEGMENT_FILES.pqCodebooks, pq.codebooks);
      const baseCodes = keep ? { codes: old.pqCodes!, positionOf: old.slotPositions() } : null;
      writeFileSync(join(dir, SEGMENT_FILES.pqCodes), pqCodesByPosition(listSlots, writer.baseSlotOf.view(), pq, vectors, baseCodes));
    }
    writeMeta(dir, { dimension, count, lists, groups: quantizer.groupStarts.length - 1, trainedCount });
    return { count, lists, trained: !keep };
  } finally {
    vectors.close();
  }
}
