// Removes the files no document row points to (a crash between writing an upload and committing its row,
// between deleting a row and removing its file, or while a file was still being written) and the folders
// left empty, and makes what remains private (0600 files, 0700 folders) so files written by earlier
// versions, or copied in from a backup, are covered too (the search indexes as well: makePrivate). It runs on a thread of its own after the server listens (file-sweep-thread.ts):
// at 110k stored files it took 16-20 s, which the server used to spend before answering anything.
// Uploads go on meanwhile: what this server wrote (modified since it started) is left alone, and a race
// with an upload or a deletion over a folder is settled by the filesystem (a folder is removed only empty).
import { chmodSync, lstatSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import type { Db } from "./db.ts";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./files.ts";
import { isGone, isNotPermitted } from "../file-errors.ts";

export interface SweepResult {
  removedFiles: number;
  keptFiles: number;
}

/** The stored files' paths (read from their own index, migration 006). */
export const STORED_FILES_SQL = "SELECT storage_path FROM documents WHERE storage_path IS NOT NULL";

/** The storage paths (relative to the data dir) that document rows point to. */
export function storedFiles(db: Db): Set<string> {
  return new Set(db.query<{ storage_path: string }, []>(STORED_FILES_SQL).all().map((row) => row.storage_path));
}

/**
 * Sweeps <dataDir>/files, keeping `referenced` (storedFiles, read after the start). Entries modified at or
 * after `startedAtMs` (this server's start, less a margin) are this server's own and kept as they are:
 * every row for an older file was committed before the start, so `referenced` covers it.
 */
export function sweepFileStore(referenced: Set<string>, dataDir: string, startedAtMs: number): SweepResult {
  const result: SweepResult = { removedFiles: 0, keptFiles: 0 };
  const root = join(dataDir, "files");
  if (!lstatSync(root, { throwIfNoEntry: false })?.isDirectory()) return result;
  const ownWrite = (path: string) => (lstatSync(path, { throwIfNoEntry: false })?.mtimeMs ?? startedAtMs) >= startedAtMs;

  /** Sweeps a folder's entries; true when the folder is left empty. */
  const sweep = (folder: string): boolean => {
    let left = 0;
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch (error) {
      if (isGone(error)) return true; // a deletion removed it meanwhile
      throw error;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (ownWrite(path)) {
        makePrivate(path); // written since the start, or copied in just before it (cp -r makes them 0644)
        left++;
      } else if (entry.isDirectory()) {
        if (!sweep(path) || !removedEmpty(path)) left++;
      } else if (entry.isFile() && referenced.has(relative(dataDir, path))) {
        bestEffort(() => chmodSync(path, PRIVATE_FILE_MODE));
        result.keptFiles++;
        left++;
      } else {
        rmSync(path, { force: true }); // a symbolic link is removed, never followed
        result.removedFiles++;
      }
    }
    if (left > 0) bestEffort(() => chmodSync(folder, PRIVATE_DIR_MODE));
    return left === 0;
  };
  sweep(root);
  bestEffort(() => chmodSync(root, PRIVATE_DIR_MODE));
  return result;
}

/**
 * Makes a file, or a folder and all it holds, private (0600 files, 0700 folders); symbolic links are not
 * followed, and what this user may not change (another user's) is left as it is. For what the sweep keeps
 * without looking into it, and the search indexes.
 */
export function makePrivate(path: string): void {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat?.isFile()) bestEffort(() => chmodSync(path, PRIVATE_FILE_MODE));
  if (!stat?.isDirectory()) return;
  bestEffort(() => chmodSync(path, PRIVATE_DIR_MODE));
  let entries: string[] = [];
  bestEffort(() => (entries = readdirSync(path)));
  for (const entry of entries) makePrivate(join(path, entry));
}

/** Runs `action`, passing over a path removed meanwhile or one this user may not change. */
function bestEffort(action: () => void): void {
  try {
    action();
  } catch (error) {
    if (!isGone(error) && !isNotPermitted(error)) throw error;
  }
}

/** Removes a folder found empty; false when an upload put something in it meanwhile. */
function removedEmpty(path: string): boolean {
  try {
    rmdirSync(path);
    return true;
  } catch (error) {
    if (isGone(error)) return true;
    if ((error as { code?: string }).code === "ENOTEMPTY") return false;
    throw error;
  }
}

