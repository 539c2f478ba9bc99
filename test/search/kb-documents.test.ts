// The first load of a knowledge base's documents (search/kb-documents.ts), which the first filtered search
// after a restart waits for: it reads the documents in slices, lets other work run between them, and
// takes in the changes made meanwhile. Real SQLite file and schema; documents written straight into it.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { KbDocuments } from "../../src/search/kb-documents.ts";
import { compileFilter } from "../../src/search/filters.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-kb-documents-"));
const db = openDatabase(join(dataDir, "quarry.db"));
const KB = "kb_slices";
/** More than two slices of 2,000. */
const DOCUMENTS = 4_500;
const now = new Date().toISOString();

db.query(
  "INSERT INTO accounts (id, email, email_normalized, password_hash, trial_ends_at, period_anchor, created_at, updated_at) VALUES ('acc_1', 'a@b.c', 'a@b.c', 'x', ?, ?, ?, ?)",
).run(now, now, now, now);
db.query("INSERT INTO knowledge_bases (id, account_id, name, created_at, updated_at) VALUES (?, 'acc_1', 'kb', ?, ?)").run(KB, now, now);

const docId = (i: number) => `doc_${String(i).padStart(5, "0")}`;
/** Document i holds chunk rowids 10i+1 … 10i+10 (KbDocuments reads only the documents table). */
function insertDocument(i: number, n: number): void {
  db.query(
    `INSERT INTO documents (id, kb_id, account_id, name, file_type, chunk_count, status, metadata, first_chunk_rowid, last_chunk_rowid, created_at, updated_at)
     VALUES (?, ?, 'acc_1', 'd.txt', 'txt', 10, 'ready', ?, ?, ?, ?, ?)`,
  ).run(docId(i), KB, JSON.stringify({ n }), 10 * i + 1, 10 * i + 10, now, now);
}
db.transaction(() => {
  for (let i = 0; i < DOCUMENTS; i++) insertDocument(i, i);
})();

afterAll(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const filter = { n: { $gte: 4_000 } };
const marked = (mask: Uint8Array | null, i: number) => mask !== null && mask[10 * i + 1] === 1 && mask[10 * i + 10] === 1;

test("the first filtered load reads every slice, lets other work run between them, and takes in changes made meanwhile", async () => {
  const documents = new KbDocuments(db, KB);
  documents.refresh();
  // The first slice is read before eligibility() returns; the rest after the event loop has turned.
  const pending = documents.eligibility(compileFilter(filter), JSON.stringify(filter));
  let ranBetweenSlices = false;
  setImmediate(() => (ranBetweenSlices = true));
  // Meanwhile: a document already read now matches, one not read yet is deleted, a new one is added.
  db.query("UPDATE documents SET metadata = ? WHERE id = ?").run(JSON.stringify({ n: 9_999 }), docId(10));
  db.query("DELETE FROM documents WHERE id = ?").run(docId(4_100));
  insertDocument(DOCUMENTS, 5_000);

  const { mask, count } = await pending;
  expect(ranBetweenSlices).toBe(true);
  // Documents 4,000-4,499 less 4,100, plus 10 and the new one: 10 chunks each.
  expect(count).toBe((500 - 1 + 2) * 10);
  expect(marked(mask, 10)).toBe(true);
  expect(marked(mask, 4_100)).toBe(false);
  expect(marked(mask, DOCUMENTS)).toBe(true);
  expect(marked(mask, 3_999)).toBe(false);
  expect(marked(mask, 4_499)).toBe(true);

  // The same answer as a load that started after the changes.
  const fresh = new KbDocuments(db, KB);
  fresh.refresh();
  const again = await fresh.eligibility(compileFilter(filter));
  expect(again.count).toBe(count);
  expect(again.mask).toEqual(mask);
});

test("searches that wait for the same first load share it", async () => {
  const documents = new KbDocuments(db, KB);
  documents.refresh();
  const [all, some] = await Promise.all([documents.eligibility(compileFilter({ n: { $gte: 0 } })), documents.eligibility(compileFilter(filter))]);
  expect(all.count).toBe(DOCUMENTS * 10);
  expect(some.count).toBe((500 - 1 + 2) * 10);
});
