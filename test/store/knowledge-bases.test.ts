// Knowledge-base rows (store/knowledge-bases.ts) on a real SQLite file with the real schema: document_count
// counts the documents not being deleted, from an index of those alone (migration 005), so that a knowledge
// base of many documents is read without visiting each document's row.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { insertAccount } from "../../src/store/accounts.ts";
import { insertDocument } from "../../src/store/documents.ts";
import { createKnowledgeBase, getKnowledgeBase, listKnowledgeBases } from "../../src/store/knowledge-bases.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-knowledge-bases-"));
const db = openDatabase(join(dataDir, "quarry.db"));
afterAll(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test("document_count leaves out documents being deleted, and is read from the live-documents index", () => {
  const now = new Date();
  const account = insertAccount(db, { email: "kb@example.com", name: null, passwordHash: "x", apiKeyHash: "y", trialEndsAt: now, now });
  const kbId = createKnowledgeBase(db, { accountId: account.id, name: "counted", description: null, metadata: {}, limit: null, now }).id;
  for (let i = 0; i < 5; i++) {
    insertDocument(db, { id: `doc_${i}`, kbId, accountId: account.id, name: `${i}.txt`, fileType: "txt", fileSizeBytes: 1, metadata: {}, storagePath: `files/${kbId}/doc_${i}/${i}.txt`, now });
  }
  db.query("UPDATE documents SET deleting = 1 WHERE id IN ('doc_1', 'doc_3')").run();
  expect(getKnowledgeBase(db, account.id, kbId).document_count).toBe(3);
  expect(listKnowledgeBases(db, account.id, 10).data[0].document_count).toBe(3);
  const plan = db
    .query<{ detail: string }, [string]>("EXPLAIN QUERY PLAN SELECT COUNT(*) FROM documents d WHERE d.kb_id = ? AND d.deleting = 0")
    .all(kbId)
    .map((step) => step.detail);
  expect(plan).toEqual(["SEARCH d USING COVERING INDEX documents_kb_live (kb_id=?)"]);
});
