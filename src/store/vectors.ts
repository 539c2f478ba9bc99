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

export class ReindexUnfinishedError extends Error {
  constructor(model: EmbeddingModelInfo, done: number, total: number) {
    super(
      `A "quarry reindex" to embedding model "${model.id}" stopped after ${done} of ${total} chunks: the others have no vector ` +
        `and vector search would miss them. Run "quarry reindex" again to finish it (it goes on where it stopped).`,
    );
    this.name = "ReindexUnfinishedError";
  }
}

/** Set while a reindex is unfinished: the rowid of the last chunk it re-embedded (chunks go in rowid order). */
const REINDEX_AFTER_ROWID = "reindex_after_rowid";

/** Where an unfinished reindex stopped (0: before its first chunk); null when none is. */
export function reindexProgress(db: Db): number | null {
  const value = getSetting(db, REINDEX_AFTER_ROWID);
  return value === null ? null : Number(value);
}

/** Records the reindex's progress; call in the transaction that stores the chunk's vector. */
export function recordReindexProgress(db: Db, lastRowid: number): void {
  setSetting(db, REINDEX_AFTER_ROWID, String(lastRowid));
}

export function finishReindex(db: Db): void {
  db.query("DELETE FROM settings WHERE key = ?").run(REINDEX_AFTER_ROWID);
}

/** Whether the stored vectors were made by this model. */
export function sameModel(stored: EmbeddingModelInfo | null, model: EmbeddingModelInfo): boolean {
  return stored !== null && stored.id === model.id && stored.dimension === model.dimension;
}

export function storedEmbeddingModel(db: Db): EmbeddingModelInfo | null {
  const id = getSetting(db, "embedding_model");
  const dimension = getSetting(db, "embedding_dimension");
  return id && dimension ? { id, dimension: Number(dimension) } : null;
}

/**
 * Vectors per sqlite-vec storage blob. Its default, 1,024 (2 MB blobs at 512-d), made an insert cost ~54 µs,
 * a point read ~33 µs, and the insert that starts a new blob hold the write lock ~30 ms; at 256 they cost
 * ~17 and ~5 µs, ~9 ms (measured 7,000 512-d vectors).
 */
const VECTORS_PER_BLOB = 256;

/**
 * The table of every knowledge base's vectors, found by chunk rowid (search reads them by rowid, see
 * search/stored-vectors.ts, never through vec0's own nearest-neighbour query). Until this version they were
 * in vec_chunks, partitioned by knowledge base, and each partition starts with a whole blob: 512 KB for a
 * knowledge base of one chunk (8,380 small knowledge bases of 112k chunks took 4.58 GB).
 */
export const VECTOR_TABLE = "chunk_vectors";
/** The table of earlier versions, moved into VECTOR_TABLE at start (moveOlderVectorTable). */
const OLDER_VECTOR_TABLE = "vec_chunks";

function createVectorTable(db: Db, model: EmbeddingModelInfo): void {
  db.exec(`CREATE VIRTUAL TABLE ${VECTOR_TABLE} USING vec0(
    embedding FLOAT[${model.dimension}] distance_metric=cosine,
    chunk_size=${VECTORS_PER_BLOB}
  )`);
  setSetting(db, "embedding_model", model.id);
  setSetting(db, "embedding_dimension", String(model.dimension));
}

function dropVectorTable(db: Db): void {
  db.exec(`DROP TABLE IF EXISTS ${OLDER_VECTOR_TABLE}`);
  db.exec(`DROP TABLE IF EXISTS ${VECTOR_TABLE}`);
  db.exec("DELETE FROM vector_purge");
}

/**
 * Copies the vectors of an earlier version's table into VECTOR_TABLE and drops it, in one transaction (once,
 * after an upgrade, before the server listens: 61,674 vectors in 3.8 s, a million in 126 s on 2 cores);
 * returns how many it moved. vec0 tables cannot be renamed, hence the new name: one copy, not two. The copy goes in
 * the older table's order, a knowledge base's vectors after one another.
 */
export function moveOlderVectorTable(db: Db, log: (line: string) => void = () => {}): number {
  const model = storedEmbeddingModel(db);
  const older = db.query<{ name: string }, [string]>("SELECT name FROM sqlite_master WHERE name = ?").get(OLDER_VECTOR_TABLE);
  if (!model || !older) return 0;
  log("vectors: moving the stored vectors into one table for all knowledge bases (once, after an upgrade)");
  const started = performance.now();
  const moved = db
    .transaction(() => {
      db.exec(`DROP TABLE IF EXISTS ${VECTOR_TABLE}`);
      createVectorTable(db, model);
      const { changes } = db.query(`INSERT INTO ${VECTOR_TABLE} (rowid, embedding) SELECT rowid, embedding FROM ${OLDER_VECTOR_TABLE}`).run();
      db.exec(`DROP TABLE ${OLDER_VECTOR_TABLE}`);
      return changes;
    })
    .immediate();
  log(`vectors: moved ${moved} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return moved;
}

/**
 * Makes sure the vector table matches the configured model. An empty store adopts the model; a store
 * with chunks made by another model is refused with EmbeddingModelMismatchError. A table laid out as
 * before is moved into the current one first (moveOlderVectorTable).
 */
export function ensureVectorTable(db: Db, model: EmbeddingModelInfo, log?: (line: string) => void): void {
  if (sameModel(storedEmbeddingModel(db), model)) moveOlderVectorTable(db, log);
  db.transaction(() => {
    const stored = storedEmbeddingModel(db);
    // Counted only when needed: at 1M chunks a count takes a few hundred milliseconds of every start.
    const chunkCount = () => db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM chunks").get()!.n;
    if (sameModel(stored, model)) {
      const progress = reindexProgress(db);
      if (progress === null) return;
      const done = db.query<{ n: number }, [number]>("SELECT COUNT(*) AS n FROM chunks WHERE rowid <= ?").get(progress)!.n;
      throw new ReindexUnfinishedError(model, done, chunkCount());
    }
    if (stored && chunkCount() > 0) throw new EmbeddingModelMismatchError(stored, model);
    dropVectorTable(db);
    createVectorTable(db, model);
  }).immediate();
}

/**
 * Recreates an empty vector table for a new model; the caller re-embeds every chunk (quarry reindex),
 * recording its progress, and finishes. Until then the server refuses to start.
 */
export function resetVectorTable(db: Db, model: EmbeddingModelInfo): void {
  db.transaction(() => {
    dropVectorTable(db);
    createVectorTable(db, model);
    recordReindexProgress(db, 0);
  }).immediate();
}
