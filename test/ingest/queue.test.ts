// The ingestion queue's claim order on a real SQLite file: the account with the fewest running jobs, then
// the one served longest ago, then its oldest job, whatever the length of the queue, and for jobs queued
// before the upgrade that gave each job its account (migration 012).
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../src/store/migrate.ts";
import { MIGRATIONS } from "../../src/store/migrations/index.ts";
import { applyMigration } from "../../src/store/migrate.ts";
import { openDatabase, writeTx, type Db } from "../../src/store/db.ts";
import { claimNext, enqueue } from "../../src/ingest/queue.ts";

const dir = mkdtempSync(join(tmpdir(), "quarry-queue-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const now = new Date("2026-01-01T00:00:00Z");

function addDocument(db: Db, account: string, id: string): void {
  const at = now.toISOString();
  db.query(
    `INSERT OR IGNORE INTO accounts (id, email, email_normalized, password_hash, trial_ends_at, period_anchor, created_at, updated_at)
     VALUES (?1, ?1, ?1, 'x', ?2, ?2, ?2, ?2)`,
  ).run(account, at);
  db.query("INSERT OR IGNORE INTO knowledge_bases (id, account_id, name, created_at, updated_at) VALUES (?1, ?2, 'kb', ?3, ?3)").run(`kb_${account}`, account, at);
  db.query("INSERT INTO documents (id, kb_id, account_id, name, file_type, status, created_at, updated_at) VALUES (?1, ?2, ?3, 'd.txt', 'txt', 'pending', ?4, ?4)").run(
    id,
    `kb_${account}`,
    account,
    at,
  );
}

const claim = (db: Db) => writeTx(db, () => claimNext(db, now));

test("accounts take turns however long one account's queue is; each account's jobs go oldest first", () => {
  const db = openDatabase(join(dir, "turns.db"));
  writeTx(db, () => {
    for (let i = 0; i < 3_000; i++) {
      addDocument(db, "acc_a", `doc_a${i}`);
      enqueue(db, `doc_a${i}`, now);
    }
    for (const id of ["doc_b0", "doc_b1"]) {
      addDocument(db, "acc_b", id);
      enqueue(db, id, now);
    }
    addDocument(db, "acc_c", "doc_c0");
    enqueue(db, "doc_c0", now);
  });
  // One running job each after the first three claims; then the account served longest ago goes first.
  expect([claim(db), claim(db), claim(db), claim(db), claim(db), claim(db)]).toEqual(["doc_a0", "doc_b0", "doc_c0", "doc_a1", "doc_b1", "doc_a2"]);
  db.close();
});

test("jobs queued before migration 012 get their account and are claimed after the upgrade", () => {
  const path = join(dir, "upgrade.db");
  const old = new Database(path, { create: true, strict: true });
  old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
  for (const m of MIGRATIONS.filter((m) => m.version < 12).sort((a, b) => a.version - b.version)) {
    applyMigration(old, m);
    old.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(m.version, m.name, now.toISOString());
  }
  for (const [account, id] of [["acc_a", "doc_a0"], ["acc_a", "doc_a1"], ["acc_b", "doc_b0"]]) {
    addDocument(old, account, id);
    old.query("INSERT INTO ingest_jobs (document_id, state, attempts, enqueued_at) VALUES (?, 'queued', 0, ?)").run(id, now.toISOString());
  }
  migrate(old);
  expect(old.query("SELECT document_id, account_id FROM ingest_jobs ORDER BY seq").all()).toEqual([
    { document_id: "doc_a0", account_id: "acc_a" },
    { document_id: "doc_a1", account_id: "acc_a" },
    { document_id: "doc_b0", account_id: "acc_b" },
  ]);
  expect([claim(old), claim(old), claim(old), claim(old)]).toEqual(["doc_a0", "doc_b0", "doc_a1", null]);
  old.close();
});
