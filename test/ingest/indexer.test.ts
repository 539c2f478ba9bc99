// The indexer's last step (ingest/indexer.ts completeDocument) on a real SQLite file with the real schema:
// a document larger than one write is written a slice per transaction, yet ends with one contiguous rowid
// range and is never searched half-written; a replacement's old chunks go first; a document deleted
// between two writes leaves nothing; a failed one's chunks go a slice at a time.
// Chunks come with ready-made vectors: the model is not what is tested here.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { ensureVectorTable } from "../../src/store/vectors.ts";
import { insertAccount } from "../../src/store/accounts.ts";
import { createKnowledgeBase } from "../../src/store/knowledge-bases.ts";
import { insertDocument } from "../../src/store/documents.ts";
import { newChunks } from "../helpers/new-chunks.ts";
import { completeDocument, failDocumentInSlices } from "../../src/ingest/indexer.ts";
import { IndexCache } from "../../src/search/index-cache.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-indexer-"));
const db = openDatabase(join(dataDir, "quarry.db"));
ensureVectorTable(db, { id: "test", dimension: 4 });
const now = new Date();
const account = insertAccount(db, { email: "a@example.com", name: null, passwordHash: "x", apiKeyHash: "y", trialEndsAt: now, now });
const kbId = createKnowledgeBase(db, { accountId: account.id, name: "kb", description: null, metadata: {}, limit: null, now }).id;

afterAll(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function embeddingDocument(id: string): string {
  insertDocument(db, { id, kbId, accountId: account.id, name: `${id}.txt`, fileType: "txt", fileSizeBytes: 100, metadata: {}, storagePath: `files/${id}`, now });
  db.query("UPDATE documents SET status = 'embedding' WHERE id = ?").run(id);
  return id;
}

function stored(id: string) {
  const rows = db
    .query<{ rowid: number; chunk_index: number; mark: number }, [string]>(
      "SELECT c.rowid, c.chunk_index, v.embedding AS mark FROM chunks c JOIN chunk_vectors v ON v.rowid = c.rowid WHERE c.document_id = ? ORDER BY c.rowid",
    )
    .all(id);
  const document = db.query<{ status: string; chunk_count: number; first_chunk_rowid: number; last_chunk_rowid: number }, [string]>(
    "SELECT status, chunk_count, first_chunk_rowid, last_chunk_rowid FROM documents WHERE id = ?",
  ).get(id);
  return {
    document,
    rowids: rows.map((r) => r.rowid),
    indexes: rows.map((r) => r.chunk_index),
    marks: new Set(rows.map((r) => new Float32Array((r.mark as unknown as Uint8Array).buffer.slice(0))[0])),
  };
}

test("a document of several writes ends ready with one contiguous range; its replacement's old chunks go first", async () => {
  const id = embeddingDocument("doc_large");
  expect(await completeDocument(db, id, null, newChunks(450, 1), now, false)).toBe(true);
  const first = stored(id);
  expect(first.indexes).toEqual([...Array(450).keys()]);
  expect(first.rowids.at(-1)! - first.rowids[0]).toBe(449);
  expect(first.document).toEqual({ status: "ready", chunk_count: 450, first_chunk_rowid: first.rowids[0], last_chunk_rowid: first.rowids.at(-1)! });
  expect(first.marks).toEqual(new Set([1]));

  // Re-processed (a replacement): 1,200 chunks, then 300 in their place.
  db.query("UPDATE documents SET status = 'embedding' WHERE id = ?").run(id);
  expect(await completeDocument(db, id, null, newChunks(1200, 2), now, false)).toBe(true);
  db.query("UPDATE documents SET status = 'embedding' WHERE id = ?").run(id);
  expect(await completeDocument(db, id, null, newChunks(300, 3), now, false)).toBe(true);
  const last = stored(id);
  expect(last.indexes).toEqual([...Array(300).keys()]);
  expect(last.rowids[0]).toBeGreaterThan(first.rowids.at(-1)! + 1200 - 1);
  expect(last.rowids.at(-1)! - last.rowids[0]).toBe(299);
  expect(last.document).toEqual({ status: "ready", chunk_count: 300, first_chunk_rowid: last.rowids[0], last_chunk_rowid: last.rowids.at(-1)! });
  expect(last.marks).toEqual(new Set([3]));
});

test("a document deleted between two writes is dropped and leaves no chunks", async () => {
  const id = embeddingDocument("doc_gone");
  const completing = completeDocument(db, id, null, newChunks(450, 4), now, false);
  // The first slice is written before completeDocument first waits.
  expect(db.query("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?").get(id)).toEqual({ n: 200 });
  db.query("DELETE FROM documents WHERE id = ?").run(id);
  expect(await completing).toBe(false);
  expect(db.query("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?").get(id)).toEqual({ n: 0 });
});

test("a failed replacement's old chunks go a slice at a time, then it is failed with none", async () => {
  const id = embeddingDocument("doc_failed");
  expect(await completeDocument(db, id, null, newChunks(1100, 6), now, false)).toBe(true);
  db.query("UPDATE documents SET status = 'parsing' WHERE id = ?").run(id);
  const failing = failDocumentInSlices(db, id, "No text could be extracted from this file", now);
  // One slice of 500 is deleted before the first pause.
  expect(db.query("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?").get(id)).toEqual({ n: 600 });
  const failed = await failing;
  expect(failed && { status: failed.status, chunk_count: failed.chunk_count, error_detail: failed.error_detail }).toEqual({
    status: "failed",
    chunk_count: 0,
    error_detail: "No text could be extracted from this file",
  });
  expect(db.query("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?").get(id)).toEqual({ n: 0 });
});

test("a document that became ready meanwhile is not failed: its chunks stay", async () => {
  const id = embeddingDocument("doc_finished");
  expect(await completeDocument(db, id, null, newChunks(3, 7), now, false)).toBe(true);
  expect(await failDocumentInSlices(db, id, "Processing took longer than 60 minutes", now)).toBeNull();
  expect(stored(id).document).toMatchObject({ status: "ready", chunk_count: 3 });
  expect(stored(id).rowids.length).toBe(3);
});

test("a document being written is not searched until it is ready, even when every other document is ready", async () => {
  const cache = new IndexCache({ db, dataDir, databasePath: join(dataDir, "quarry.db"), dimension: 4, memoryBudgetBytes: 100_000_000, segmentMinChanges: 1_000_000 });
  const kbIndex = cache.get(kbId);
  const keywordHits = async (word: string) => {
    const index = cache.get(kbId);
    await index.caughtUp();
    return index.keywordSearch(word, await index.eligibility(null), 10);
  };
  try {
    const id = embeddingDocument("doc_searched");
    const completing = completeDocument(db, id, null, newChunks(450, 5).map((chunk) => ({ ...chunk, text: `walrus ${chunk.text}` })), now, false);
    expect(db.query("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?").get(id)).toEqual({ n: 200 });
    expect(await keywordHits("walrus")).toEqual([]);
    expect(await completing).toBe(true);
    expect((await keywordHits("walrus")).length).toBe(10);
  } finally {
    kbIndex.close();
    await cache.stop();
  }
});
