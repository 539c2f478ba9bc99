// Vectors of deleted chunks are queued and deleted in background slices (store/vector-purger.ts). Real
// SQLite file with the real schema and sqlite-vec; chunks written with the store's own insertChunks.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, writeTx } from "../../src/store/db.ts";
import { ensureVectorTable } from "../../src/store/vectors.ts";
import { deleteChunksOf, insertChunks, type NewChunk } from "../../src/store/chunks.ts";
import { purgeVectorSlice } from "../../src/store/vector-purger.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-vector-purge-"));
const db = openDatabase(join(dataDir, "quarry.db"));
ensureVectorTable(db, { id: "test", dimension: 4 });
const now = new Date();

afterAll(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function documentRow(docId: string, kbId: string): { id: string; kb_id: string } {
  const at = now.toISOString();
  db.query(
    "INSERT OR IGNORE INTO accounts (id, email, email_normalized, password_hash, trial_ends_at, period_anchor, created_at, updated_at) VALUES ('acc_1', 'a@b.c', 'a@b.c', 'x', ?, ?, ?, ?)",
  ).run(at, at, at, at);
  db.query("INSERT OR IGNORE INTO knowledge_bases (id, account_id, name, created_at, updated_at) VALUES (?, 'acc_1', ?, ?, ?)").run(kbId, kbId, at, at);
  db.query(
    "INSERT INTO documents (id, kb_id, account_id, name, file_type, file_size_bytes, chunk_count, status, metadata, created_at, updated_at) VALUES (?, ?, 'acc_1', 'd.txt', 'txt', 1, 0, 'ready', '{}', ?, ?)",
  ).run(docId, kbId, at, at);
  return { id: docId, kb_id: kbId };
}

function chunks(count: number, mark: number): NewChunk[] {
  return Array.from({ length: count }, (_, i) => ({
    text: `chunk ${i}`,
    chunkIndex: i,
    startPage: null,
    endPage: 1,
    sectionHeading: "",
    tokenCount: 2,
    metadata: {},
    embedding: new Float32Array([mark, i, 0, 0]),
  }));
}

const vectorCount = (kbId: string) => db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM vec_chunks WHERE kb_id = ?").get(kbId)!.n;
const queued = () => db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM vector_purge").get()!.n;
const firstValues = (docId: string) =>
  db
    .query<{ embedding: Uint8Array }, [string]>("SELECT v.embedding FROM vec_chunks v JOIN chunks c ON c.rowid = v.rowid WHERE c.document_id = ? ORDER BY c.chunk_index")
    .all(docId)
    .map((row) => new Float32Array(row.embedding.buffer, row.embedding.byteOffset, 4)[0]);

test("a deleted document's vectors are queued, then deleted in slices; other vectors stay", () => {
  const keep = documentRow("doc_keep", "kb_keep");
  const gone = documentRow("doc_gone", "kb_gone");
  writeTx(db, () => insertChunks(db, keep, chunks(5, 1), now));
  writeTx(db, () => insertChunks(db, gone, chunks(40, 2), now));
  // Not the last rows: the deleted rowids are not handed out again below.
  writeTx(db, () => insertChunks(db, documentRow("doc_after", "kb_keep"), chunks(1, 3), now));

  writeTx(db, () => deleteChunksOf(db, gone.id));
  expect(queued()).toBe(40);
  expect(vectorCount("kb_gone")).toBe(40);

  // A slice stops at its time budget (here at once, after one vector) and says whether any are left.
  expect(purgeVectorSlice(db, 0)).toBe(true);
  expect(vectorCount("kb_gone")).toBe(39);
  expect(purgeVectorSlice(db, 1000)).toBe(false);
  expect(vectorCount("kb_gone")).toBe(0);
  expect(vectorCount("kb_keep")).toBe(6);
  expect(firstValues(keep.id)).toEqual([1, 1, 1, 1, 1]);
});

test("a new chunk that gets a deleted chunk's rowid replaces its queued vector", () => {
  const old = documentRow("doc_old", "kb_reuse");
  writeTx(db, () => insertChunks(db, old, chunks(3, 7), now));
  const oldRowids = db.query<{ rowid: number }, [string]>("SELECT rowid FROM chunks WHERE document_id = ? ORDER BY rowid").all(old.id).map((r) => r.rowid);
  writeTx(db, () => deleteChunksOf(db, old.id));
  expect(queued()).toBe(3);

  // SQLite hands out the largest rowid + 1, so the new chunks take the deleted ones' rowids.
  const fresh = documentRow("doc_new", "kb_reuse");
  writeTx(db, () => insertChunks(db, fresh, chunks(3, 9), now));
  const newRowids = db.query<{ rowid: number }, [string]>("SELECT rowid FROM chunks WHERE document_id = ? ORDER BY rowid").all(fresh.id).map((r) => r.rowid);
  expect(newRowids).toEqual(oldRowids);
  expect(queued()).toBe(0);
  expect(firstValues(fresh.id)).toEqual([9, 9, 9]);
  expect(purgeVectorSlice(db, 1000)).toBe(false);
  expect(firstValues(fresh.id)).toEqual([9, 9, 9]);
});
