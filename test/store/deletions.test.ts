// Deletions (store/deletions.ts) on a real SQLite file with the real schema. A knowledge base marked
// deleting is not found, listed or counted before its rows are gone; a document marked deleting is out of
// search at once, and its chunks go a slice at a time; resuming finishes what a stop interrupted.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { ensureVectorTable } from "../../src/store/vectors.ts";
import { getDocument, insertDocument, listDocuments, transitionStatus, unfinishedDocumentIds } from "../../src/store/documents.ts";
import { completeDocument } from "../../src/ingest/indexer.ts";
import { loadChunkHits } from "../../src/search/hits.ts";
import { KbDocuments } from "../../src/search/kb-documents.ts";
import { newChunks } from "../helpers/new-chunks.ts";
import { DocumentService } from "../../src/ingest/document-service.ts";
import { systemClock } from "../../src/clock.ts";
import { insertAccount } from "../../src/store/accounts.ts";
import { assertKnowledgeBaseOwned, countKnowledgeBases, createKnowledgeBase, getKnowledgeBase, listKnowledgeBases } from "../../src/store/knowledge-bases.ts";
import { Deletions, ROWS_PER_SLICE } from "../../src/store/deletions.ts";
import { FileStore } from "../../src/store/files.ts";
import { assertDocumentCapacity } from "../../src/billing/usage.ts";
import type { QuarryError } from "../../src/errors.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-kb-deletion-"));
const db = openDatabase(join(dataDir, "quarry.db"));
ensureVectorTable(db, { id: "test", dimension: 4 });
const files = new FileStore(dataDir);
const now = new Date();

afterAll(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const account = insertAccount(db, { email: "a@example.com", name: null, passwordHash: "x", apiKeyHash: "y", trialEndsAt: now, now });
const kb = (name: string) => createKnowledgeBase(db, { accountId: account.id, name, description: null, metadata: {}, limit: null, now }).id;

test("a knowledge base marked deleting: not found, listed or counted; resumed: the row and files are gone", async () => {
  const [doomed, kept] = [kb("doomed"), kb("kept")];
  const folder = join(dataDir, "files", doomed);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "file.txt"), "x");

  // A stopped deleter does step 1 only, as a stop right after it would leave things.
  const stopped = new Deletions(db, files);
  await stopped.stop();
  stopped.deleteKnowledgeBase(account.id, doomed);
  await stopped.settled();
  expect(db.query("SELECT deleting FROM knowledge_bases WHERE id = ?").get(doomed)).toEqual({ deleting: 1 });
  expect(() => getKnowledgeBase(db, account.id, doomed)).toThrow("Knowledge base not found");
  expect(() => assertKnowledgeBaseOwned(db, account.id, doomed)).toThrow("Knowledge base not found");
  expect(listKnowledgeBases(db, account.id, 10).data.map((k) => k.id)).toEqual([kept]);
  expect(countKnowledgeBases(db, account.id)).toBe(1);
  expect(() => stopped.deleteKnowledgeBase(account.id, doomed)).toThrow("Knowledge base not found");
  expect(existsSync(folder)).toBe(true);

  const next = new Deletions(db, files);
  next.resume();
  await next.settled();
  expect(db.query("SELECT COUNT(*) AS n FROM knowledge_bases WHERE id = ?").get(doomed)).toEqual({ n: 0 });
  expect(existsSync(folder)).toBe(false);
  expect(getKnowledgeBase(db, account.id, kept).name).toBe("kept");
});

/** A ready document of `count` chunks, written as the pipeline writes them, with a stored file. */
async function readyDocument(kbId: string, id: string, count: number): Promise<number[]> {
  insertDocument(db, { id, kbId, accountId: account.id, name: `${id}.txt`, fileType: "txt", fileSizeBytes: 1, metadata: {}, storagePath: `files/${kbId}/${id}/f.txt`, now });
  db.query("UPDATE documents SET status = 'embedding' WHERE id = ?").run(id);
  expect(await completeDocument(db, id, null, newChunks(count, 1), now, false)).toBe(true);
  mkdirSync(join(dataDir, "files", kbId, id), { recursive: true });
  writeFileSync(join(dataDir, "files", kbId, id, "f.txt"), "x");
  return db.query<{ rowid: number }, [string]>("SELECT rowid FROM chunks WHERE document_id = ? ORDER BY rowid").all(id).map((r) => r.rowid);
}

const chunkCount = (id: string) => db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?").get(id)!.n;
const documentCount = (id: string) => db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM documents WHERE id = ?").get(id)!.n;
/** The account's documents and stored bytes as the plan's limits count them (the 429's details.used). */
function charged(resource: "documents" | "storage"): number {
  try {
    if (resource === "documents") assertDocumentCapacity(db, account, 0, Number.MAX_SAFE_INTEGER, true);
    else assertDocumentCapacity(db, account, Number.MAX_SAFE_INTEGER, 0, true);
  } catch (error) {
    expect((error as QuarryError).details!.resource).toBe(resource);
    return (error as QuarryError).details!.used as number;
  }
  throw new Error("no limit reached");
}

test("a document marked deleting is out of search at once; its chunks go in slices, then its row and file", async () => {
  const kbId = kb("documents");
  const rowids = await readyDocument(kbId, "doc_doomed", 2 * ROWS_PER_SLICE + 100);
  const keptRowids = await readyDocument(kbId, "doc_kept", 3);
  expect(loadChunkHits(db, kbId, rowids.slice(0, 5)).size).toBe(5);
  const searched = new KbDocuments(db, kbId);
  searched.refresh();
  expect((await searched.eligibility(null)).count).toBe(rowids.length + 3);

  // Stopped before its first slice, as a stop right after the request's transaction would leave it.
  const stopped = new Deletions(db, files);
  await stopped.stop();
  await stopped.deleteDocument(kbId, "doc_doomed", () => {});
  expect(loadChunkHits(db, kbId, rowids).size).toBe(0);
  // Not even a candidate: search's eligible chunks are the other document's.
  searched.refresh();
  const eligible = await searched.eligibility(null);
  expect(eligible.count).toBe(3);
  expect(rowids.some((rowid) => eligible.mask![rowid])).toBe(false);
  expect(keptRowids.every((rowid) => eligible.mask![rowid])).toBe(true);
  expect(chunkCount("doc_doomed")).toBe(rowids.length);
  expect(documentCount("doc_doomed")).toBe(1);

  // The slices: every write transaction deletes at most ROWS_PER_SLICE chunks.
  const deletedSoFar: number[] = [];
  db.query("CREATE TEMP TABLE slice_sizes (n INTEGER)").run();
  db.query("CREATE TEMP TRIGGER count_deletes AFTER DELETE ON chunks BEGIN INSERT INTO slice_sizes VALUES (1); END").run();
  const next = new Deletions(db, files);
  const resumed = (async () => {
    next.resume();
    await next.settled();
  })();
  while (documentCount("doc_doomed") > 0) {
    deletedSoFar.push(db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM slice_sizes").get()!.n);
    await Bun.sleep(1);
  }
  await resumed;
  db.query("DROP TRIGGER count_deletes").run();
  expect(db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM slice_sizes").get()!.n).toBe(rowids.length);
  // Seen between slices: 500 deleted, then 1,000; the last 100 went just before the row.
  expect([...new Set(deletedSoFar)]).toEqual([ROWS_PER_SLICE, 2 * ROWS_PER_SLICE]);
  expect(chunkCount("doc_doomed")).toBe(0);
  expect(existsSync(join(dataDir, "files", kbId, "doc_doomed"))).toBe(false);
  expect(loadChunkHits(db, kbId, keptRowids).size).toBe(3);
  expect(existsSync(join(dataDir, "files", kbId, "doc_kept"))).toBe(true);
});

test("a document marked deleting is gone for other requests, and neither processed nor recovered", async () => {
  const kbId = kb("processing");
  insertDocument(db, { id: "doc_parsing", kbId, accountId: account.id, name: "p.txt", fileType: "txt", fileSizeBytes: 1, metadata: {}, storagePath: `files/${kbId}/doc_parsing/p.txt`, now });
  db.query("UPDATE documents SET status = 'parsing' WHERE id = ?").run("doc_parsing");
  expect(unfinishedDocumentIds(db)).toContain("doc_parsing");
  const [documents, bytes] = [charged("documents"), charged("storage")];
  const stopped = new Deletions(db, files);
  await stopped.stop();
  await stopped.deleteDocument(kbId, "doc_parsing", () => {});
  // Not found (GET, PUT, PATCH and the chunk list look it up so), not listed, not counted (nor by the plan's limit).
  expect(() => getDocument(db, kbId, "doc_parsing")).toThrow("Document not found");
  expect(listDocuments(db, kbId, { limit: 10 }).data).toEqual([]);
  expect(getKnowledgeBase(db, account.id, kbId).document_count).toBe(0);
  expect(charged("documents")).toBe(documents - 1);
  expect(charged("storage")).toBe(bytes - 1); // its file's 1 byte (empty metadata counts nothing)
  // A running job's next step is refused, and a start does not queue it again.
  expect(transitionStatus(db, "doc_parsing", "parsing", "chunking", now)).toBe(false);
  expect(unfinishedDocumentIds(db)).not.toContain("doc_parsing");
  const next = new Deletions(db, files);
  next.resume();
  await next.settled();
  expect(documentCount("doc_parsing")).toBe(0);
});

test("a deletion that fails fails its request; a retried DELETE or the next start finishes it", async () => {
  const kbId = kb("failing");
  await readyDocument(kbId, "doc_unlucky", 3);
  db.query("CREATE TEMP TRIGGER chunks_undeletable BEFORE DELETE ON chunks BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END").run();
  const deletions = new Deletions(db, files);
  const quiet = console.error;
  console.error = () => {};
  try {
    await expect(deletions.deleteDocument(kbId, "doc_unlucky", () => {})).rejects.toThrow("disk I/O error");
  } finally {
    console.error = quiet;
    db.query("DROP TRIGGER chunks_undeletable").run();
  }
  expect(documentCount("doc_unlucky")).toBe(1);
  expect(() => getDocument(db, kbId, "doc_unlucky")).toThrow("Document not found");
  // The document service's DELETE still finds it, and finishes it.
  const service = new DocumentService({ db, files, deletions, clock: systemClock, limitsEnabled: false, queueChanged: () => {} });
  await service.remove(account, kbId, "doc_unlucky");
  expect(documentCount("doc_unlucky")).toBe(0);
  await expect(service.remove(account, kbId, "doc_unlucky")).rejects.toThrow("Document not found");

  // Left marked by a stop instead: the next start finishes it.
  await readyDocument(kbId, "doc_stopped", 3);
  const stopped = new Deletions(db, files);
  await stopped.stop();
  await stopped.deleteDocument(kbId, "doc_stopped", () => {});
  const next = new Deletions(db, files);
  next.resume();
  await next.settled();
  expect(documentCount("doc_stopped")).toBe(0);
});
