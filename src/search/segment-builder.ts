// Builds a knowledge base's search segment from the database (run by the index worker, off the HTTP
// thread): every chunk's terms (keyword/) and vector (vector/) as of one read transaction, whose last
// search_log seq becomes the segment's watermark. The keyword side is written anew from the chunks' text
// (streamed in rowid order); the vector side starts from the previous segment when there is one, leaving
// out the chunks deleted since and adding the new ones to its lists, which is far cheaper than training.
import { join } from "node:path";
import type { Db } from "../store/db.ts";
import { lastSeq, readLog } from "./index-log.ts";
import { latestSegment, publishSegment, segmentWorkDir } from "./segment-files.ts";
import { StoredVectors } from "./stored-vectors.ts";
import { writeKeywordSegment } from "./keyword/index.ts";
import { writeVectorSegment } from "./vector/segment-writer.ts";
import { VectorSegment } from "./vector/segment.ts";

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
    const { chunkCount } = writeKeywordSegment(join(workDir, "keyword"), chunkTexts(db, kbId));
    const previous = latestSegment(dataDir, kbId);
    if (previous) {
      const base = VectorSegment.open(join(previous.dir, "vector"), dimension);
      const { added, removed } = changesSince(db, kbId, previous.watermark);
      writeVectorSegment(join(workDir, "vector"), vectorsOf(db, added, dimension), dimension, { segment: base, removed });
    } else {
      writeVectorSegment(join(workDir, "vector"), vectorsOf(db, chunkRowids(db, kbId), dimension), dimension);
    }
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

function* chunkRowids(db: Db, kbId: string): Generator<number> {
  for (const { rowid } of db.query<{ rowid: number }, [string]>("SELECT rowid FROM chunks WHERE kb_id = ? ORDER BY rowid").iterate(kbId)) yield rowid;
}

/** The chunks added (still present, ascending) and the rowids deleted since `seq`, from the log. */
function changesSince(db: Db, kbId: string, seq: number): { added: number[]; removed: Set<number> } {
  const added = new Set<number>();
  const removed = new Set<number>();
  for (const entry of readLog(db, kbId, seq, Number.MAX_SAFE_INTEGER)) {
    if (entry.added) added.add(entry.rowid);
    else {
      added.delete(entry.rowid);
      removed.add(entry.rowid);
    }
  }
  return { added: [...added].sort((a, b) => a - b), removed };
}

function* vectorsOf(db: Db, rowids: Iterable<number>, dimension: number): Generator<{ rowid: number; vector: Float32Array }> {
  const vectors = new StoredVectors(db, dimension);
  for (const rowid of rowids) {
    const vector = vectors.read(rowid);
    if (vector) yield { rowid, vector };
  }
}
