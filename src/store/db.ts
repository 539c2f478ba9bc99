// Opens the single SQLite file: private to Quarry's user, WAL, foreign keys, busy timeout, sqlite-vec
// loaded, migrations applied.
import { Database } from "bun:sqlite";
import { accessSync, chmodSync, constants, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { loadVectorExtension } from "./vector-extension.ts";
import { migrate } from "./migrate.ts";
import { assertDatabaseNotLost } from "./missing-database.ts";

export type Db = Database;

/** How long a write waits for another connection's write lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 10_000;

export interface OpenOptions {
  migrate?: boolean;
  /** SQLite's page cache for this connection, in MiB (SQLite's default: 2,000 KiB). */
  cacheMb?: number;
}

export function openDatabase(path: string, options: OpenOptions = {}): Db {
  assertDatabaseNotLost(path);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = openFile(path);
  // Before WAL mode: SQLite creates the -wal and -shm files with the database file's mode.
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
  try {
    db.exec("PRAGMA journal_mode = WAL");
  } catch (error) {
    db.close();
    throw namingFile(error, path);
  }
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (options.cacheMb !== undefined && options.cacheMb > 0) db.exec(`PRAGMA cache_size = -${Math.round(options.cacheMb * 1024)}`);
  loadVectorExtension(db);
  if (options.migrate !== false) migrate(db);
  return db;
}

/**
 * SQLite says only "unable to open database file" when the file is there but not for this user (another
 * owner, a read-only mount): the system's own error, which names the path and the cause, is thrown instead.
 */
function openFile(path: string): Database {
  try {
    return new Database(path, { create: true, strict: true });
  } catch (error) {
    if ((error as { code?: unknown }).code === "SQLITE_CANTOPEN" && existsSync(path)) accessSync(path, constants.R_OK | constants.W_OK);
    throw namingFile(error, path);
  }
}

/**
 * SQLite's own words for a file it cannot use as a database ("file is not a database", "unable to open
 * database file": a text file or a folder in its place), with the file named, as other start-up errors do.
 */
function namingFile(error: unknown, path: string): unknown {
  const code = (error as { code?: unknown }).code;
  if (code !== "SQLITE_NOTADB" && code !== "SQLITE_CANTOPEN" && code !== "SQLITE_CORRUPT") return error;
  return Object.assign(new Error(`${(error as Error).message}: ${path}`), { code });
}

/** Runs fn in a BEGIN IMMEDIATE transaction: writers queue on the lock instead of failing mid-way. */
export function writeTx<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

/** What tryWriteTx returns when another connection holds the write lock. */
export const LOCKED = Symbol("locked");

/**
 * writeTx without waiting for the write lock: LOCKED at once when another connection (a worker) holds it.
 * SQLite's wait sleeps the thread in steps of 1, 2, 5, 10… ms, which the HTTP thread must not do for
 * background work that can simply be tried again.
 */
export function tryWriteTx<T>(db: Db, fn: () => T): T | typeof LOCKED {
  db.exec("PRAGMA busy_timeout = 0");
  try {
    return db.transaction(fn).immediate();
  } catch (error) {
    if ((error as { code?: string }).code === "SQLITE_BUSY") return LOCKED;
    throw error;
  } finally {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

/** How long a write on the HTTP thread waits before it tries a write lock held elsewhere again. */
const RETRY_MS = 1;

/**
 * writeTx for the HTTP thread: while another connection (an ingestion worker, the index worker) holds the
 * write lock, it tries again every RETRY_MS with the event loop free in between. SQLite's own wait sleeps
 * the thread in steps of 1, 2, 5, 10, 15, 20, 25 ms, and every request waited with it: while documents
 * were being ingested, each search's usage count did. Fails like writeTx, with SQLITE_BUSY, once the lock
 * stayed taken for BUSY_TIMEOUT_MS.
 */
export async function writeTxWhenFree<T>(db: Db, fn: () => T): Promise<T> {
  const deadline = performance.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    const result = tryWriteTx(db, fn);
    if (result !== LOCKED) return result;
    if (performance.now() >= deadline) throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
    await Bun.sleep(RETRY_MS);
  }
}

/** Checkpoints the WAL into the main file and closes; used on graceful shutdown. */
export function closeDatabase(db: Db): void {
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}
