// What a start reads of the documents table on the HTTP thread, before it listens (migration 006): the
// unfinished documents (queued again), those being deleted (their deletion finished) and the stored files'
// paths (swept); then its knowledge bases' chunk counts, ahead of their first search (migration 025).
// Each comes from an index of those rows alone, never from the document rows, and a start's requeue drops
// the jobs of finished documents one job at a time. Real SQLite file, real schema.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { insertAccount } from "../../src/store/accounts.ts";
import { insertDocument, UNFINISHED_DOCUMENTS_SQL, unfinishedDocumentIds } from "../../src/store/documents.ts";
import { createKnowledgeBase } from "../../src/store/knowledge-bases.ts";
import { DELETING_DOCUMENTS_SQL } from "../../src/store/deletions.ts";
import { STORED_FILES_SQL } from "../../src/store/file-sweep.ts";
import { enqueue, requeueAll } from "../../src/ingest/queue.ts";
import { COUNTS_SQL, readDocumentCounts } from "../../src/search/kb-documents.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-startup-reads-"));
const db = openDatabase(join(dataDir, "quarry.db"));
afterAll(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const now = new Date();
const account = insertAccount(db, { email: "start@example.com", name: null, passwordHash: "x", apiKeyHash: "y", trialEndsAt: now, now });
const kbId = createKnowledgeBase(db, { accountId: account.id, name: "start", description: null, metadata: {}, limit: null, now }).id;
const statuses = ["pending", "parsing", "chunking", "embedding", "ready", "failed"];
for (let i = 0; i < 60; i++) {
  const id = `doc_${String(i).padStart(2, "0")}`;
  insertDocument(db, { id, kbId, accountId: account.id, name: `${i}.txt`, fileType: "txt", fileSizeBytes: 1, metadata: {}, storagePath: `files/${kbId}/${id}/${i}.txt`, now });
  // Rows without a stored file (storage_path null, as the bench data writes them): every third one here.
  db.query("UPDATE documents SET status = ?, deleting = ?, storage_path = CASE WHEN ? THEN NULL ELSE storage_path END WHERE id = ?").run(statuses[i % 6], i % 10 === 9 ? 1 : 0, i % 3 === 0 ? 1 : 0, id);
}

function plan(sql: string): string[] {
  return db.query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`).all().map((step) => step.detail);
}

test("the unfinished documents come from their own index, in id order, without those being deleted", () => {
  expect(plan(UNFINISHED_DOCUMENTS_SQL)).toEqual(["SCAN documents USING COVERING INDEX documents_unfinished"]);
  const expected = Array.from({ length: 60 }, (_, i) => i)
    .filter((i) => i % 6 < 4 && i % 10 !== 9)
    .map((i) => `doc_${String(i).padStart(2, "0")}`);
  expect(unfinishedDocumentIds(db)).toEqual(expected);
});

test("the documents being deleted, and the stored files' paths, come from their own indexes", () => {
  expect(plan(DELETING_DOCUMENTS_SQL)).toEqual(["SCAN documents USING COVERING INDEX documents_deleting"]);
  expect(db.query<{ id: string }, []>(DELETING_DOCUMENTS_SQL).all().map((row) => row.id)).toEqual(["doc_09", "doc_19", "doc_29", "doc_39", "doc_49", "doc_59"]);
  expect(plan(STORED_FILES_SQL)).toEqual(["SEARCH documents USING COVERING INDEX documents_stored (storage_path>?)"]);
  expect(db.query(STORED_FILES_SQL).all().length).toBe(40);
});

test("a start's requeue drops the jobs of ready and failed documents and keeps the others", () => {
  for (const id of ["doc_00", "doc_04", "doc_05", "doc_07"]) enqueue(db, id, now); // pending, ready, failed, parsing
  requeueAll(db, [], now);
  const jobs = db.query<{ document_id: string }, []>("SELECT document_id FROM ingest_jobs ORDER BY document_id").all();
  expect(jobs.map((job) => job.document_id)).toEqual(["doc_00", "doc_07"]);
});

test("a knowledge base's chunk counts come from an index, counting ready documents not being deleted", () => {
  // Documents i get chunks 10i+1 … 10i+i%5+1 (none for every seventh: not chunked yet).
  for (let i = 0; i < 60; i++) {
    if (i % 7 === 0) continue;
    db.query("UPDATE documents SET first_chunk_rowid = ?, last_chunk_rowid = ? WHERE id = ?").run(10 * i + 1, 10 * i + 1 + (i % 5), `doc_${String(i).padStart(2, "0")}`);
  }
  expect(plan(COUNTS_SQL)).toEqual(["SEARCH documents USING COVERING INDEX documents_kb_chunks (kb_id=?)"]);
  const chunked = Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 7 !== 0);
  const searchable = chunked.filter((i) => i % 6 === 4 && i % 10 !== 9);
  expect(db.query(COUNTS_SQL).get(kbId)).toEqual({
    chunks: searchable.reduce((sum, i) => sum + (i % 5) + 1, 0),
    notReady: chunked.length - searchable.length,
    maxRowid: 10 * 59 + 1 + (59 % 5),
  });
});

test("while the models load, a start reads the chunk counts of the knowledge bases with a search segment, most recently built first, within its time budget", () => {
  const others = ["older", "newer"].map((name) => createKnowledgeBase(db, { accountId: account.id, name, description: null, metadata: {}, limit: null, now }).id);
  const watermarks = [[kbId, 20], [others[0], 5], [others[1], 40]] as const;
  for (const [kb, watermark] of watermarks) db.query("INSERT INTO search_segments (kb_id, watermark) VALUES (?, ?)").run(kb, watermark);
  expect(readDocumentCounts(db, 1000)).toEqual([others[1], kbId, others[0]]);
  // Over budget from the start: the most recently built one is still read.
  expect(readDocumentCounts(db, 0)).toEqual([others[1]]);
});
