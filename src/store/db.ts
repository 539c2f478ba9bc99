// Opens the single SQLite file: WAL, foreign keys, busy timeout, sqlite-vec loaded, migrations applied.
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { loadVectorExtension } from "./vector-extension.ts";
import { migrate } from "./migrate.ts";

export type Db = Database;

export function openDatabase(path: string, options: { migrate?: boolean } = {}): Db {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 10000");
  loadVectorExtension(db);
  if (options.migrate !== false) migrate(db);
  return db;
}

/** Runs fn in a BEGIN IMMEDIATE transaction: writers queue on the lock instead of failing mid-way. */
export function writeTx<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

/** Checkpoints the WAL into the main file and closes; used on graceful shutdown. */
export function closeDatabase(db: Db): void {
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}
