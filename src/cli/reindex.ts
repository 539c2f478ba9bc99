// `quarry reindex`: re-embeds every stored chunk with the configured embedding model, replacing the
// vector table, so a store made with one model can move to another. Prints progress as it goes. Its
// progress is committed with each batch: an interrupted reindex goes on where it stopped when run again
// with the same model, and the server refuses to start until it has finished.
import type { Config } from "../config.ts";
import { openDatabase, closeDatabase, writeTx } from "../store/db.ts";
import { databasePathIn } from "../store/database-file.ts";
import { finishReindex, recordReindexProgress, reindexProgress, resetVectorTable, sameModel, storedEmbeddingModel, moveOlderVectorTable, VECTOR_TABLE } from "../store/vectors.ts";
import { loadModels } from "../models/load.ts";
import { resetSearchIndexes } from "../search/index-recovery.ts";
import { lockDataDir } from "../store/data-dir-lock.ts";
import { removeOtherRuntimes } from "../runtime/index.ts";
import { assertDatabaseExists } from "./existing-database.ts";

const BATCH = 64;

/** Re-embeds every chunk; refuses (throws) while a server uses the data directory, whose vectors it replaces. */
export async function reindex(config: Config, log: (line: string) => void = console.log): Promise<number> {
  assertDatabaseExists(config.dataDir);
  const releaseDataDir = lockDataDir(config.dataDir);
  try {
    await removeOtherRuntimes(config.dataDir);
    return await reembed(config, log);
  } finally {
    releaseDataDir();
  }
}

async function reembed(config: Config, log: (line: string) => void): Promise<number> {
  const db = openDatabase(databasePathIn(config.dataDir));
  const { embedder, reranker } = await loadModels({
    modelsDir: config.modelsDir,
    embedModel: config.embedModel,
    rerankModel: null,
  });
  try {
    const model = { id: embedder.id, dimension: embedder.dimension };
    const before = storedEmbeddingModel(db);
    const total = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM chunks").get()!.n;
    const stoppedAt = reindexProgress(db);
    let lastRowid = 0;
    if (stoppedAt !== null && sameModel(before, model)) {
      lastRowid = stoppedAt;
      log(`Resuming the re-embedding of ${total} chunks with ${model.id} (${model.dimension}-d)`);
      moveOlderVectorTable(db, log); // stopped by an earlier version
    } else {
      log(`Re-embedding ${total} chunks with ${model.id} (${model.dimension}-d)${before ? `, replacing ${before.id} (${before.dimension}-d)` : ""}`);
      resetVectorTable(db, model);
    }
    const select = db.query<{ rowid: number; text: string }, [number, number]>(
      "SELECT rowid, text FROM chunks WHERE rowid > ? ORDER BY rowid LIMIT ?",
    );
    const insert = db.query(`INSERT INTO ${VECTOR_TABLE} (rowid, embedding) VALUES (?, ?)`);
    const started = performance.now();
    const already = db.query<{ n: number }, [number]>("SELECT COUNT(*) AS n FROM chunks WHERE rowid <= ?").get(lastRowid)!.n;
    let done = already;
    for (;;) {
      const rows = select.all(lastRowid, BATCH);
      if (rows.length === 0) break;
      const { vectors } = await embedder.embed(rows.map((r) => r.text), "passage");
      lastRowid = rows[rows.length - 1].rowid;
      writeTx(db, () => {
        rows.forEach((r, i) => insert.run(r.rowid, vectors[i]));
        recordReindexProgress(db, lastRowid);
      });
      done += rows.length;
      const rate = (done - already) / ((performance.now() - started) / 1000);
      log(`  ${done}/${total} chunks (${((100 * done) / Math.max(total, 1)).toFixed(1)} %, ${rate.toFixed(1)} chunks/s)`);
    }
    // The search segments hold the old vectors: drop them; the server rebuilds them from the new ones.
    resetSearchIndexes(db, config.dataDir);
    writeTx(db, () => finishReindex(db));
    log(`Done: ${done - already} chunks re-embedded in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
    return done - already;
  } finally {
    await embedder.close();
    await reranker?.close();
    closeDatabase(db);
  }
}
