// Builds a knowledge base's search segment from the database (run by the index worker, off the HTTP
// thread): every chunk's terms (keyword/) and vector (vector/) as of one read transaction, whose last
// search_log seq becomes the segment's watermark. The chunks are read twice, in rowid order, streaming.
import { join } from "node:path";
import type { Db } from "../store/db.ts";
import { lastSeq } from "./index-log.ts";
import { publishSegment, segmentWorkDir } from "./segment-files.ts";
import { StoredVectors } from "./stored-vectors.ts";
import { writeKeywordSegment } from "./keyword/index.ts";
import { writeVectorSegment } from "./vector/segment-writer.ts";

export interface BuiltSegment {
  dir: string;
  watermark: number;
  chunkCount: number;
}

export function buildSegment(db: Db, dataDir: string, kbId: string, dimension: number): BuiltSegment {
  const workDir = segmentWorkDir(dataDir, kbId);
  // A read transaction pins one snapshot for the watermark and both passes over the chunks.
  db.exec("BEGIN");
  try {
    const watermark = lastSeq(db, kbId);
    const chunkCount = db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM chunks WHERE kb_id = ?").get(kbId)!.n;
    writeKeywordSegment(join(workDir, "keyword"), chunkTexts(db, kbId));
    writeVectorSegment(join(workDir, "vector"), chunkVectors(db, kbId, dimension), dimension);
    db.exec("COMMIT");
    const dir = publishSegment(dataDir, kbId, workDir, { watermark, chunkCount, builtAt: new Date().toISOString() });
    return { dir, watermark, chunkCount };
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  }
}

function* chunkTexts(db: Db, kbId: string): Generator<{ rowid: number; text: string }> {
  yield* db.query<{ rowid: number; text: string }, [string]>("SELECT rowid, text FROM chunks WHERE kb_id = ? ORDER BY rowid").iterate(kbId);
}

function* chunkVectors(db: Db, kbId: string, dimension: number): Generator<{ rowid: number; vector: Float32Array }> {
  const vectors = new StoredVectors(db, dimension);
  for (const { rowid } of db.query<{ rowid: number }, [string]>("SELECT rowid FROM chunks WHERE kb_id = ? ORDER BY rowid").iterate(kbId)) {
    const vector = vectors.read(rowid);
    if (vector) yield { rowid, vector };
  }
}
