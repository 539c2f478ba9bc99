// A knowledge base marked deleting (store/knowledge-base-deletion.ts, step 1) is not found, listed or
// counted, before its rows are gone; resuming finishes the deletion. Real SQLite file and schema.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { insertAccount } from "../../src/store/accounts.ts";
import { assertKnowledgeBaseOwned, countKnowledgeBases, createKnowledgeBase, getKnowledgeBase, listKnowledgeBases } from "../../src/store/knowledge-bases.ts";
import { KnowledgeBaseDeleter } from "../../src/store/knowledge-base-deletion.ts";
import { FileStore } from "../../src/store/files.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-kb-deletion-"));
const db = openDatabase(join(dataDir, "quarry.db"));
const files = new FileStore(dataDir);
const now = new Date();

afterAll(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test("marked deleting: not found, listed or counted; resumed: the row and files are gone", async () => {
  const account = insertAccount(db, { email: "a@example.com", name: null, passwordHash: "x", apiKeyHash: "y", trialEndsAt: now, now });
  const kb = (name: string) => createKnowledgeBase(db, { accountId: account.id, name, description: null, metadata: {}, limit: null, now }).id;
  const [doomed, kept] = [kb("doomed"), kb("kept")];
  const folder = join(dataDir, "files", doomed);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "file.txt"), "x");

  // A stopped deleter does step 1 only, as a stop right after it would leave things.
  const stopped = new KnowledgeBaseDeleter(db, files);
  await stopped.stop();
  stopped.delete(account.id, doomed);
  await stopped.settled();
  expect(db.query("SELECT deleting FROM knowledge_bases WHERE id = ?").get(doomed)).toEqual({ deleting: 1 });
  expect(() => getKnowledgeBase(db, account.id, doomed)).toThrow("Knowledge base not found");
  expect(() => assertKnowledgeBaseOwned(db, account.id, doomed)).toThrow("Knowledge base not found");
  expect(listKnowledgeBases(db, account.id, 10).data.map((k) => k.id)).toEqual([kept]);
  expect(countKnowledgeBases(db, account.id)).toBe(1);
  expect(() => stopped.delete(account.id, doomed)).toThrow("Knowledge base not found");
  expect(existsSync(folder)).toBe(true);

  const next = new KnowledgeBaseDeleter(db, files);
  next.resume();
  await next.settled();
  expect(db.query("SELECT COUNT(*) AS n FROM knowledge_bases WHERE id = ?").get(doomed)).toEqual({ n: 0 });
  expect(existsSync(folder)).toBe(false);
  expect(getKnowledgeBase(db, account.id, kept).name).toBe("kept");
});
