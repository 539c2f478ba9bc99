// Reads stored chunk vectors out of sqlite-vec. One chunk at a time goes through vec0's own rowid
// lookup (~0.1 ms each). A whole knowledge base is read from vec0's storage tables directly, a blob of
// 1,024 vectors at a time, which is ~15× faster than 100k single lookups; should that layout ever not be
// what sqlite-vec 0.1 writes, it falls back to single lookups.
import type { Db } from "../store/db.ts";

function asFloats(blob: Uint8Array, dimension: number): Float32Array | null {
  if (blob.byteLength !== dimension * 4) return null;
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

/** The stored vector of one chunk, or null when it has none. */
export function readVector(db: Db, rowid: number, dimension: number): Float32Array | null {
  const row = db.query<{ embedding: Uint8Array }, [number]>("SELECT embedding FROM vec_chunks WHERE rowid = ?").get(rowid);
  return row ? asFloats(row.embedding, dimension) : null;
}

interface StoredBlock {
  size: number;
  validity: Uint8Array;
  rowids: Uint8Array;
  vectors: Uint8Array;
}

/**
 * Calls visit(rowid, vector) for the stored vectors of a knowledge base (vec_chunks partition) whose
 * rowid `wanted` accepts. Returns false, having visited nothing, when vec0's storage layout is not the
 * expected one; the caller then reads chunk by chunk.
 */
export function readPartition(
  db: Db,
  kbId: string,
  dimension: number,
  wanted: (rowid: number) => boolean,
  visit: (rowid: number, vector: Float32Array) => void,
): boolean {
  let blocks: StoredBlock[];
  try {
    blocks = db
      .query<StoredBlock, [string]>(
        `SELECT c.size, c.validity, c.rowids, v.vectors FROM vec_chunks_chunks c
         JOIN vec_chunks_vector_chunks00 v ON v.rowid = c.chunk_id WHERE c.partition00 = ?`,
      )
      .all(kbId);
  } catch {
    return false;
  }
  const bytesPerVector = dimension * 4;
  const wellFormed = blocks.every(
    (b) => b.rowids.byteLength === b.size * 8 && b.validity.byteLength * 8 >= b.size && b.vectors.byteLength === b.size * bytesPerVector,
  );
  if (!wellFormed) return false;
  for (const block of blocks) {
    const rowids = new DataView(block.rowids.buffer, block.rowids.byteOffset, block.rowids.byteLength);
    for (let i = 0; i < block.size; i++) {
      if (!(block.validity[i >> 3] & (1 << (i & 7)))) continue;
      const rowid = Number(rowids.getBigInt64(i * 8, true));
      if (!wanted(rowid)) continue;
      const start = block.vectors.byteOffset + i * bytesPerVector;
      visit(rowid, new Float32Array(block.vectors.buffer.slice(start, start + bytesPerVector)));
    }
  }
  return true;
}
