// A consistent copy of a data directory, taken while a server works on it (or while none does). First the
// database as of one moment, by SQLite's VACUUM INTO: one read transaction, so the server's writers go on
// (its WAL grows meanwhile). Then what that copy of the database points to: the uploaded files of its
// documents, the search segments it records and the JWT secret. Published segments never change; one
// removed meanwhile (replaced by a newer one) is left out and rebuilt from the database at the first start
// (index-recovery.ts). The copy is itself a data directory: a server started on it serves the backup.
import { Database } from "bun:sqlite";
import { chmodSync, closeSync, copyFileSync, constants, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, realpathSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { openDatabase } from "./db.ts";
import { DATABASE_FILE, databasePathIn } from "./database-file.ts";
import { storedFiles } from "./file-sweep.ts";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./files.ts";
import { isGone } from "../file-errors.ts";
import { JWT_SECRET_FILE } from "../accounts/jwt-secret.ts";

export interface BackupResult {
  /** When the database was read: the backup holds what was committed before. */
  takenAt: Date;
  databaseBytes: number;
  files: number;
  fileBytes: number;
  /** Files of documents deleted between the database copy and the file copy: left out. */
  filesGone: number;
  segments: number;
  segmentBytes: number;
  /** Segments replaced between the database copy and theirs: rebuilt at the first start instead. */
  segmentsGone: number;
  jwtSecret: boolean;
}

/** Thrown inside a copy when a source file or folder is gone (removed since the database was copied). */
class Gone extends Error {}

/**
 * Copies the data directory `dataDir` into `destination`, a new or empty folder. The database is written
 * under a temporary name and renamed last, so an interrupted backup never looks like a complete one.
 */
export function backupDataDir(dataDir: string, destination: string): BackupResult {
  mkdirSync(destination, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (readdirSync(destination).length > 0) throw new Error(`${destination} is not empty`);
  try {
    return copyDataDir(dataDir, destination);
  } catch (error) {
    // Nothing half-done is left behind (a full disk, a folder that cannot be written).
    for (const entry of readdirSync(destination)) rmSync(join(destination, entry), { recursive: true, force: true });
    throw error;
  }
}

function copyDataDir(dataDir: string, destination: string): BackupResult {
  const partial = join(destination, `${DATABASE_FILE}.partial`);
  const takenAt = new Date();
  const live = openDatabase(databasePathIn(dataDir), { migrate: false });
  try {
    live.query("VACUUM INTO ?").run(partial);
  } finally {
    live.close(); // no checkpoint: the server, if one runs, owns the WAL
  }
  chmodSync(partial, PRIVATE_FILE_MODE);
  syncFile(partial);

  const snapshot = new Database(partial, { readonly: true });
  let paths: Set<string>;
  let recorded: { kb_id: string; watermark: number }[];
  try {
    paths = storedFiles(snapshot);
    // A database no server of this version has opened yet may predate segments (migration 021).
    const hasSegments = snapshot.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'search_segments'").get() !== null;
    recorded = hasSegments ? snapshot.query<{ kb_id: string; watermark: number }, []>("SELECT kb_id, watermark FROM search_segments").all() : [];
  } finally {
    snapshot.close();
  }

  const result: BackupResult = {
    takenAt,
    databaseBytes: statSync(partial).size,
    files: 0,
    fileBytes: 0,
    filesGone: 0,
    segments: 0,
    segmentBytes: 0,
    segmentsGone: 0,
    jwtSecret: false,
  };
  for (const path of paths) {
    const bytes = copyPrivately(inside(dataDir, path), inside(destination, path));
    if (bytes === null) result.filesGone++;
    else [result.files, result.fileBytes] = [result.files + 1, result.fileBytes + bytes];
  }
  for (const { kb_id, watermark } of recorded) {
    const bytes = copySegment(join(dataDir, "indexes", kb_id, String(watermark)), join(destination, "indexes", kb_id), String(watermark));
    if (bytes === null) result.segmentsGone++;
    else [result.segments, result.segmentBytes] = [result.segments + 1, result.segmentBytes + bytes];
  }
  result.jwtSecret = copyPrivately(join(dataDir, JWT_SECRET_FILE), join(destination, JWT_SECRET_FILE)) !== null;

  renameSync(partial, databasePathIn(destination));
  syncFile(destination);
  return result;
}

/** `path` (relative, from the database) under `root`; a path that would lead outside it is refused. */
function inside(root: string, path: string): string {
  const absolute = resolve(root, path);
  if (!absolute.startsWith(resolve(root) + sep)) throw new Error(`A stored file's path leads outside the data directory: ${path}`);
  return absolute;
}

/** Copies a file (0600, flushed to disk) into place, making its folders (0700); its size, or null when the source is gone. */
function copyPrivately(from: string, to: string): number | null {
  mkdirSync(dirname(to), { recursive: true, mode: PRIVATE_DIR_MODE });
  try {
    // A copy-on-write clone where the filesystem offers one (btrfs, XFS), a plain copy elsewhere.
    copyFileSync(from, to, constants.COPYFILE_FICLONE);
  } catch (error) {
    if (isGone(error) && !existsSync(from)) return null;
    throw error;
  }
  chmodSync(to, PRIVATE_FILE_MODE);
  syncFile(to);
  return statSync(to).size;
}

/** Copies a published segment folder into `kbFolder` as `name`, whole or not at all; its size, or null when it is gone. */
function copySegment(from: string, kbFolder: string, name: string): number | null {
  // Built under another name and renamed: a folder named by a number is always complete (segment-files.ts).
  const work = join(kbFolder, `copying-${name}`);
  try {
    const bytes = copyTree(from, work);
    renameSync(work, join(kbFolder, name));
    return bytes;
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    if (error instanceof Gone) return null;
    throw error;
  }
}

function copyTree(from: string, to: string): number {
  let entries;
  try {
    entries = readdirSync(from, { withFileTypes: true });
  } catch (error) {
    if (isGone(error)) throw new Gone();
    throw error;
  }
  mkdirSync(to, { recursive: true, mode: PRIVATE_DIR_MODE });
  let bytes = 0;
  for (const entry of entries) {
    const [source, target] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory()) bytes += copyTree(source, target);
    else {
      const copied = copyPrivately(source, target);
      if (copied === null) throw new Gone();
      bytes += copied;
    }
  }
  return bytes;
}

/** Flushes a file or folder to disk. */
function syncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Whether `path` is `folder` or lies inside it, either of them reached through symbolic links or not. */
export function isWithin(path: string, folder: string): boolean {
  const fromFolder = relative(realPath(folder), realPath(path));
  return !isAbsolute(fromFolder) && fromFolder !== ".." && !fromFolder.startsWith(`..${sep}`);
}

/** The absolute path with its links resolved, as far as it exists (a destination yet to be made need not). */
function realPath(path: string): string {
  const absolute = resolve(path);
  const parent = dirname(absolute);
  if (existsSync(absolute)) return realpathSync(absolute);
  return parent === absolute ? absolute : join(realPath(parent), basename(absolute));
}
