// Vectors of deleted chunks are queued and deleted in background slices (store/vector-purger.ts). Real
// SQLite file with the real schema and sqlite-vec; chunks written with the store's own functions.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, writeTx } from "../../src/store/db.ts";
import { ensureVectorTable } from "../../src/store/vectors.ts";
import { deleteChunksOf, insertChunks, reserveChunkRowids, type NewChunk } from "../../src/store/chunks.ts";
import { newChunks } from "../helpers/new-chunks.ts";
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

/** The rowids written in each knowledge base (the vector table does not record it). */
const written = new Map<string, number[]>();

/** Writes the chunks under freshly reserved rowids, as ingest/indexer.ts does; returns the rowids. */
function write(document: { id: string; kb_id: string }, list: NewChunk[]): number[] {
  const rowids = writeTx(db, () => {
    const first = reserveChunkRowids(db, list.length);
    insertChunks(db, document, list, first, now);
    return list.map((_, i) => first + i);
  });
  written.set(document.kb_id, [...(written.get(document.kb_id) ?? []), ...rowids]);
  return rowids;
}

const vectorCount = (kbId: string) =>
  db.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM chunk_vectors WHERE rowid IN (${(written.get(kbId) ?? []).join(",")})`).get()!.n;
const queued = () => db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM vector_purge").get()!.n;
const firstValues = (docId: string) =>
  db
    .query<{ embedding: Uint8Array }, [string]>("SELECT v.embedding FROM chunk_vectors v JOIN chunks c ON c.rowid = v.rowid WHERE c.document_id = ? ORDER BY c.chunk_index")
    .all(docId)
    .map((row) => new Float32Array(row.embedding.buffer, row.embedding.byteOffset, 4)[0]);

test("a deleted document's vectors are queued, then deleted in slices; other vectors stay", () => {
  const keep = documentRow("doc_keep", "kb_keep");
  const gone = documentRow("doc_gone", "kb_gone");
  write(keep, newChunks(5, 1));
  write(gone, newChunks(40, 2));
  write(documentRow("doc_after", "kb_keep"), newChunks(1, 3));

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

test("rowids are never handed out twice: not while a deleted chunk's vector is queued, nor after", () => {
  const old = documentRow("doc_old", "kb_reuse");
  const oldRowids = write(old, newChunks(3, 7));
  writeTx(db, () => deleteChunksOf(db, old.id));
  expect(queued()).toBe(3);

  // The deleted chunks were the last ones, so SQLite alone would hand their rowids out again.
  const fresh = documentRow("doc_new", "kb_reuse");
  const newRowids = write(fresh, newChunks(3, 9));
  expect(newRowids[0]).toBe(oldRowids[2] + 1);
  expect(firstValues(fresh.id)).toEqual([9, 9, 9]);
  expect(purgeVectorSlice(db, 1000)).toBe(false);
  expect(firstValues(fresh.id)).toEqual([9, 9, 9]);

  writeTx(db, () => deleteChunksOf(db, fresh.id));
  expect(purgeVectorSlice(db, 1000)).toBe(false);
  expect(write(documentRow("doc_later", "kb_reuse"), newChunks(1, 5))).toEqual([newRowids[2] + 1]);
});

test("a purge never waits for another writer: an empty queue is seen without the lock, a full one is left for later", () => {
  while (purgeVectorSlice(db, 1000));
  const other = openDatabase(join(dataDir, "quarry.db"), { migrate: false });
  const poller = openDatabase(join(dataDir, "quarry.db"), { migrate: false });
  poller.exec("PRAGMA busy_timeout = 0");
  try {
    other.exec("BEGIN IMMEDIATE");
    // With the lock held elsewhere, taking it would fail at once (SQLITE_BUSY); looking does not.
    expect(purgeVectorSlice(poller, 1000)).toBe(false);
    other.exec("COMMIT");

    const later = documentRow("doc_held", "kb_held");
    write(later, newChunks(4, 5));
    writeTx(db, () => deleteChunksOf(db, later.id));
    other.exec("BEGIN IMMEDIATE");
    // Queued work while the lock is held: reported as left, nothing deleted, no SQLITE_BUSY.
    expect(purgeVectorSlice(poller, 1000)).toBe(true);
    expect(vectorCount("kb_held")).toBe(4);
    other.exec("COMMIT");
    expect(purgeVectorSlice(poller, 1000)).toBe(false);
    expect(vectorCount("kb_held")).toBe(0);
  } finally {
    other.close();
    poller.close();
  }
});
