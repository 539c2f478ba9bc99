// Opens the single SQLite file: private to Quarry's user, WAL, foreign keys, busy timeout, sqlite-vec
// loaded, migrations applied.
import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { loadVectorExtension } from "./vector-extension.ts";
import { migrate } from "./migrate.ts";

export type Db = Database;

export interface OpenOptions {
  migrate?: boolean;
  /** SQLite's page cache for this connection, in MiB (SQLite's default: 2,000 KiB). */
  cacheMb?: number;
}

export function openDatabase(path: string, options: OpenOptions = {}): Db {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new Database(path, { create: true, strict: true });
  // Before WAL mode: SQLite creates the -wal and -shm files with the database file's mode.
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 10000");
  if (options.cacheMb !== undefined && options.cacheMb > 0) db.exec(`PRAGMA cache_size = -${Math.round(options.cacheMb * 1024)}`);
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
