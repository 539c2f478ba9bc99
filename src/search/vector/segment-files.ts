// The files of one vector segment directory. Slot i (0-based) is the i-th smallest rowid of the segment;
// the per-slot files are flat little-endian arrays, memory-mapped when the segment is opened.
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export const SEGMENT_FILES = {
  /** SegmentMeta as JSON, written last: a directory without it is not a segment. */
  meta: "vectors.json",
  /** Int32 per slot, ascending. */
  rowids: "rowids.i32",
  /** Int8 × dimension per slot (vector/int8-codes.ts). */
  codes: "codes.i8",
  /** Float32 per slot: the scale of the slot's codes. */
  scales: "scales.f32",
  /** Float32 × dimension per list: the unit centroids of the inverted file (vector/ivf.ts). */
  centroids: "centroids.f32",
  /** Float32 × dimension per group of lists, and Int32 × (groups + 1): where each group's lists start (vector/ivf.ts). */
  groups: "groups.f32",
  groupStarts: "group-starts.i32",
  /** Int32 × (lists + 1): list l's slots are listSlots[listStarts[l] ... listStarts[l + 1]). */
  listStarts: "list-starts.i32",
  /** Int32 per slot: the slots grouped by list, ascending within a list. */
  listSlots: "list-slots.i32",
  /** Int32 per entry of list-slots: its slot's rowid (filters check eligibility in list order). */
  listRowids: "list-rowids.i32",
  /** Float32 × dimension × PQ_CENTROIDS: the product quantizer's codebooks (vector/pq.ts); absent for one list. */
  pqCodebooks: "pq-codebooks.f32",
  /** ProductQuantizer.codeBytes per entry of list-slots, in its order, blocked (vector/pq-blocks.ts). */
  pqCodes: "pq-codes.u8",
} as const;

/**
 * Format 1 was an HNSW graph, format 2 an inverted file without list-rowids and groups, format 3 stored
 * the product-quantized codes one after another, format 4 had 6-bit codes of 8-d parts (vector/pq.ts); a
 * segment of an older format is rebuilt (index-recovery.ts).
 */
export const FORMAT = 5;

export interface SegmentMeta {
  format: typeof FORMAT;
  dimension: number;
  count: number;
  lists: number;
  groups: number;
  /** The segment size the centroids were trained at; they are trained anew once it doubles or halves. */
  trainedCount: number;
}

export function writeMeta(dir: string, meta: Omit<SegmentMeta, "format">): void {
  writeFileSync(join(dir, SEGMENT_FILES.meta), JSON.stringify({ format: FORMAT, ...meta } satisfies SegmentMeta));
}

/** The segment's SegmentMeta from the bytes of its meta file, checked against this version and `dimension`. */
export function parseMeta(bytes: Uint8Array, dir: string, dimension: number): SegmentMeta {
  const meta = JSON.parse(new TextDecoder().decode(bytes)) as SegmentMeta;
  if (meta.format !== FORMAT) throw new Error(`Vector segment ${dir} has format ${meta.format}; this version reads format ${FORMAT}`);
  if (meta.dimension !== dimension) throw new Error(`Vector segment ${dir} holds ${meta.dimension}-d vectors, not ${dimension}-d`);
  return meta;
}
