// The files of one vector segment directory. Slot i (0-based) is the i-th smallest rowid of the segment;
// the side files are flat little-endian arrays by slot, memory-mapped when the segment is opened.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const SEGMENT_FILES = {
  /** SegmentMeta as JSON, written last: a directory without it is not a segment. */
  meta: "vectors.json",
  /** usearch HNSW index keyed by rowid (absent when the segment is empty). */
  hnsw: "vectors.usearch",
  /** Int32 per slot, ascending. */
  rowids: "rowids.i32",
  /** Int8 × dimension per slot (vector/int8-codes.ts). */
  codes: "codes.i8",
  /** Float32 per slot: the scale of the slot's codes. */
  scales: "scales.f32",
} as const;

const FORMAT = 1;

export interface SegmentMeta {
  format: typeof FORMAT;
  dimension: number;
  count: number;
  /** Chunks deleted from the graph since it was last built anew (deleted nodes still cost search time). */
  graphRemovals: number;
}

export function writeMeta(dir: string, meta: Omit<SegmentMeta, "format">): void {
  writeFileSync(join(dir, SEGMENT_FILES.meta), JSON.stringify({ format: FORMAT, ...meta } satisfies SegmentMeta));
}

export function readMeta(dir: string, dimension: number): SegmentMeta {
  const meta = JSON.parse(readFileSync(join(dir, SEGMENT_FILES.meta), "utf8")) as SegmentMeta;
  if (meta.format !== FORMAT) throw new Error(`Vector segment ${dir} has format ${meta.format}; this version reads format ${FORMAT}`);
  if (meta.dimension !== dimension) throw new Error(`Vector segment ${dir} holds ${meta.dimension}-d vectors, not ${dimension}-d`);
  return meta;
}
