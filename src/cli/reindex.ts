// `quarry reindex`: re-embeds every stored chunk with the configured embedding model, replacing the
// vector table, so a store made with one model can move to another. Prints progress as it goes.
import { join } from "node:path";
import type { Config } from "../config.ts";
import { openDatabase, closeDatabase, writeTx } from "../store/db.ts";
import { resetVectorTable, storedEmbeddingModel } from "../store/vectors.ts";
import { loadModels } from "../models/load.ts";
import { resetSearchIndexes } from "../search/index-recovery.ts";
import { lockDataDir } from "../store/data-dir-lock.ts";

const BATCH = 64;

/** Re-embeds every chunk; refuses (throws) while a server uses the data directory, whose vectors it replaces. */
export async function reindex(config: Config, log: (line: string) => void = console.log): Promise<number> {
  const releaseDataDir = lockDataDir(config.dataDir);
  try {
    return await reembed(config, log);
  } finally {
    releaseDataDir();
  }
}

async function reembed(config: Config, log: (line: string) => void): Promise<number> {
  const db = openDatabase(join(config.dataDir, "quarry.db"));
  const { embedder, reranker } = await loadModels({
    modelsDir: config.modelsDir,
    embedModel: config.embedModel,
    rerankModel: null,
  });
  try {
    const before = storedEmbeddingModel(db);
    const total = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM chunks").get()!.n;
    log(`Re-embedding ${total} chunks with ${embedder.id} (${embedder.dimension}-d)${before ? `, replacing ${before.id} (${before.dimension}-d)` : ""}`);
    resetVectorTable(db, { id: embedder.id, dimension: embedder.dimension });
    const select = db.query<{ rowid: number; kb_id: string; text: string }, [number, number]>(
      "SELECT rowid, kb_id, text FROM chunks WHERE rowid > ? ORDER BY rowid LIMIT ?",
    );
    const insert = db.query("INSERT INTO vec_chunks (rowid, kb_id, embedding) VALUES (?, ?, ?)");
    const started = performance.now();
    let done = 0;
    let lastRowid = 0;
    for (;;) {
      const rows = select.all(lastRowid, BATCH);
      if (rows.length === 0) break;
      const { vectors } = await embedder.embed(rows.map((r) => r.text), "passage");
      writeTx(db, () => rows.forEach((r, i) => insert.run(r.rowid, r.kb_id, vectors[i])));
      done += rows.length;
      lastRowid = rows[rows.length - 1].rowid;
      const rate = done / ((performance.now() - started) / 1000);
      log(`  ${done}/${total} chunks (${((100 * done) / Math.max(total, 1)).toFixed(1)} %, ${rate.toFixed(1)} chunks/s)`);
    }
    // The search segments hold the old vectors: drop them; the server rebuilds them from the new ones.
    resetSearchIndexes(db, config.dataDir);
    log(`Done: ${done} chunks re-embedded in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
    return done;
  } finally {
    await embedder.close();
    await reranker?.close();
    closeDatabase(db);
  }
}
