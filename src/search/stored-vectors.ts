// Reads chunk vectors out of sqlite-vec's storage by rowid. vec0 keeps vectors in blobs of its chunk_size
// (256, see store/vectors.ts) (chunk_vectors_vector_chunks00) and maps each rowid to a blob and an offset (chunk_vectors_rowids); reading
// the blob and slicing is far faster than vec0's own per-row lookup (~0.1 ms each). Chunks written
// together share a blob, so a few cached blobs serve a whole document or a scan in rowid order. Should
// sqlite-vec's layout ever not be the expected one, each vector is read through vec0 instead.
import type { Db } from "../store/db.ts";
import { VECTOR_TABLE } from "../store/vectors.ts";

const CACHED_BLOCKS = 4;

export class StoredVectors {
  private readonly blocks = new Map<number, Uint8Array>();
  private direct: boolean;

  constructor(
    private readonly db: Db,
    private readonly dimension: number,
  ) {
    this.direct = !this.hasExpectedLayout();
  }

  /** The chunk's vector, or null when it has none. */
  read(rowid: number): Float32Array | null {
    if (this.direct) return this.readThroughVec0(rowid);
    const place = this.db
      .query<{ chunk_id: number; chunk_offset: number }, [number]>(`SELECT chunk_id, chunk_offset FROM ${VECTOR_TABLE}_rowids WHERE rowid = ?`)
      .get(rowid);
    if (!place) return null;
    const block = this.block(place.chunk_id);
    const bytes = this.dimension * 4;
    const start = place.chunk_offset * bytes;
    if (!block || block.byteLength < start + bytes) return this.readThroughVec0(rowid);
    return new Float32Array(block.buffer.slice(block.byteOffset + start, block.byteOffset + start + bytes));
  }

  private block(chunkId: number): Uint8Array | null {
    const cached = this.blocks.get(chunkId);
    if (cached) return cached;
    const row = this.db.query<{ vectors: Uint8Array }, [number]>(`SELECT vectors FROM ${VECTOR_TABLE}_vector_chunks00 WHERE rowid = ?`).get(chunkId);
    if (!row) return null;
    if (this.blocks.size >= CACHED_BLOCKS) this.blocks.delete(this.blocks.keys().next().value!);
    this.blocks.set(chunkId, row.vectors);
    return row.vectors;
  }

  private readThroughVec0(rowid: number): Float32Array | null {
    const row = this.db.query<{ embedding: Uint8Array }, [number]>(`SELECT embedding FROM ${VECTOR_TABLE} WHERE rowid = ?`).get(rowid);
    if (!row || row.embedding.byteLength !== this.dimension * 4) return null;
    return new Float32Array(row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength));
  }

  private hasExpectedLayout(): boolean {
    try {
      this.db.query(`SELECT chunk_id, chunk_offset FROM ${VECTOR_TABLE}_rowids LIMIT 1`).all();
      this.db.query(`SELECT vectors FROM ${VECTOR_TABLE}_vector_chunks00 LIMIT 0`).all();
      return true;
    } catch {
      return false;
    }
  }
}
