// The sqlite-vec table of chunk embeddings. Its dimension is fixed by the embedding model, so the table is
// created at startup for the configured model, and the model that made the stored vectors is recorded:
// starting with a different model must never mix vectors silently.
import type { Db } from "./db.ts";
import { getSetting, setSetting } from "./settings.ts";

export interface EmbeddingModelInfo {
  id: string;
  dimension: number;
}

export class EmbeddingModelMismatchError extends Error {
  constructor(stored: EmbeddingModelInfo, configured: EmbeddingModelInfo) {
    super(
      `The stored vectors were made with embedding model "${stored.id}" (${stored.dimension}-d), ` +
        `but "${configured.id}" (${configured.dimension}-d) is configured. ` +
        `Run "quarry reindex" to re-embed every chunk with "${configured.id}", or configure "${stored.id}" again.`,
    );
    this.name = "EmbeddingModelMismatchError";
  }
}

export function storedEmbeddingModel(db: Db): EmbeddingModelInfo | null {
  const id = getSetting(db, "embedding_model");
  const dimension = getSetting(db, "embedding_dimension");
  return id && dimension ? { id, dimension: Number(dimension) } : null;
}

/**
 * Vectors per sqlite-vec storage blob. Its default, 1,024 (2 MB blobs at 512-d), made an insert cost ~54 µs,
 * a point read ~33 µs, and the insert that starts a new blob hold the write lock ~30 ms; at 256 they cost
 * ~17 and ~5 µs, ~9 ms (measured 7,000 512-d vectors). Tables created before keep their size.
 */
const VECTORS_PER_BLOB = 256;

function createVectorTable(db: Db, model: EmbeddingModelInfo): void {
  db.exec(`CREATE VIRTUAL TABLE vec_chunks USING vec0(
    kb_id TEXT PARTITION KEY,
    embedding FLOAT[${model.dimension}] distance_metric=cosine,
    chunk_size=${VECTORS_PER_BLOB}
  )`);
  setSetting(db, "embedding_model", model.id);
  setSetting(db, "embedding_dimension", String(model.dimension));
}

function dropVectorTable(db: Db): void {
  db.exec("DROP TABLE IF EXISTS vec_chunks");
  db.exec("DELETE FROM vector_purge");
}

/**
 * Makes sure the vector table matches the configured model. An empty store adopts the model; a store
 * with chunks made by another model is refused with EmbeddingModelMismatchError.
 */
export function ensureVectorTable(db: Db, model: EmbeddingModelInfo): void {
  db.transaction(() => {
    const stored = storedEmbeddingModel(db);
    if (stored && stored.id === model.id && stored.dimension === model.dimension) return;
    const chunkCount = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM chunks").get()!.n;
    if (stored && chunkCount > 0) throw new EmbeddingModelMismatchError(stored, model);
    dropVectorTable(db);
    createVectorTable(db, model);
  }).immediate();
}

/** Recreates an empty vector table for a new model; the caller re-embeds every chunk (quarry reindex). */
export function resetVectorTable(db: Db, model: EmbeddingModelInfo): void {
  db.transaction(() => {
    dropVectorTable(db);
    createVectorTable(db, model);
  }).immediate();
}
