// At startup, before anything else uses the file store: removes files no document row points to (a crash
// between writing an upload and committing its row, between deleting a row and removing its file, or while
// a file was still being written) and the folders left empty, and makes what remains private (0600 files,
// 0700 folders) so files written by earlier versions are covered too.
import { chmodSync, lstatSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import type { Db } from "./db.ts";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./files.ts";

export interface SweepResult {
  removedFiles: number;
  keptFiles: number;
}

/** The stored files' paths (read from their own index, migration 006). */
export const STORED_FILES_SQL = "SELECT storage_path FROM documents WHERE storage_path IS NOT NULL";

/** Sweeps <dataDir>/files. Must run while no upload is in flight (one server per data dir). */
export function sweepFileStore(db: Db, dataDir: string): SweepResult {
  const rows = db.query<{ storage_path: string }, []>(STORED_FILES_SQL).all();
  const referenced = new Set(rows.map((row) => row.storage_path));
  const result: SweepResult = { removedFiles: 0, keptFiles: 0 };
  const root = join(dataDir, "files");
  if (!lstatSync(root, { throwIfNoEntry: false })?.isDirectory()) return result;

  /** Sweeps a folder's entries; true when the folder is left empty. */
  const sweep = (folder: string): boolean => {
    let left = 0;
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (sweep(path)) rmdirSync(path);
        else left++;
      } else if (entry.isFile() && referenced.has(relative(dataDir, path))) {
        chmodSync(path, PRIVATE_FILE_MODE);
        result.keptFiles++;
        left++;
      } else {
        rmSync(path, { force: true }); // a symbolic link is removed, never followed
        result.removedFiles++;
      }
    }
    if (left > 0) chmodSync(folder, PRIVATE_DIR_MODE);
    return left === 0;
  };
  sweep(root);
  chmodSync(root, PRIVATE_DIR_MODE);
  return result;
}
