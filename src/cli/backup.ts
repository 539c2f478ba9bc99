// `quarry backup <destination>`: a consistent copy of the data directory (store/backup.ts), also while a
// server runs on it. The copy is a data directory: serve it, or move it into place while no server runs.
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { commandArguments, type Config } from "../config.ts";
import { backupDataDir, isWithin, type BackupResult } from "../store/backup.ts";
import { PRIVATE_DIR_MODE } from "../store/files.ts";
import { runInBackground } from "../background-priority.ts";
import { CliError } from "./cli-error.ts";
import { assertDatabaseExists } from "./existing-database.ts";
import { isNotPermitted, isOutOfSpace } from "../file-errors.ts";

export const BACKUP_USAGE = `Usage:
  quarry backup <destination directory> [--data-dir DIR]

Copies the data directory into a new or empty directory: the database as of the moment the command starts
(a running server goes on serving and writing meanwhile), the uploaded files of its documents, its search
indexes and the JWT secret. To restore, start a server on the copy (--data-dir <destination>), or stop the
server and move the copy into place.`;

export function backupCommand(config: Config, argv: string[]): string {
  const args = commandArguments(argv);
  if (args.length !== 1 || args[0]!.trim() === "") throw new CliError(BACKUP_USAGE);
  const destination = resolve(args[0]);
  assertDatabaseExists(config.dataDir);
  if (isWithin(destination, config.dataDir)) {
    throw new CliError(`The backup cannot go into the data directory it copies (${resolve(config.dataDir)}): choose a folder outside it.`);
  }
  if (existsSync(destination) && (!statSync(destination).isDirectory() || readdirSync(destination).length > 0)) {
    throw new CliError(`${destination} already exists and is not an empty directory: a backup goes into a new or empty one.`);
  }
  makeDestination(destination);
  // Its copying yields the cores to a running server's requests (the backup runs on this thread).
  runInBackground();
  const started = performance.now();
  let result: BackupResult;
  try {
    result = backupDataDir(config.dataDir, destination);
  } catch (error) {
    // Said of the destination: the messages of the copy's writes name the data dir's file being copied, or
    // only "database or disk is full", which reads as the live data dir being full.
    if (!isOutOfSpace(error)) throw error;
    throw new Error(`no space left in ${destination} for the backup (what was copied is removed): free space there or choose another destination`);
  }
  return summary(resolve(config.dataDir), destination, result, (performance.now() - started) / 1000);
}

/**
 * Creates the destination (and the folders on the way) or makes the empty one given private, or says why the
 * backup cannot be written there and what to do. Another user's folder that this one may write in is used as
 * it is (the backup's files are private).
 */
function makeDestination(destination: string): void {
  try {
    mkdirSync(destination, { recursive: true, mode: PRIVATE_DIR_MODE });
    try {
      chmodSync(destination, PRIVATE_DIR_MODE);
    } catch (error) {
      if (!isNotPermitted(error)) throw error;
      accessSync(destination, constants.W_OK);
    }
  } catch (error) {
    const { code } = error as { code?: string };
    const reason =
      code === "ENOTDIR" || code === "EEXIST" ? "a folder on the way to it is a file"
      : code === "EACCES" || code === "EPERM" ? "permission denied"
      : code === "EROFS" ? "the file system is read-only"
      : code === "ENOENT" ? "no folder can be made there"
      : (error as Error).message;
    throw new Error(`cannot write the backup into ${destination}: ${reason}; choose another destination`);
  }
}

function summary(dataDir: string, destination: string, r: BackupResult, seconds: number): string {
  const lines = [
    `Backed up ${dataDir} to ${destination} in ${seconds.toFixed(1)} s.`,
    `  database  ${size(r.databaseBytes)}, as of ${r.takenAt.toISOString()}`,
    `  files     ${count(r.files, "file")} (${size(r.fileBytes)})` + (r.filesGone > 0 ? `; ${r.filesGone} of documents deleted meanwhile left out` : ""),
    `  indexes   ${count(r.segments, "segment")} (${size(r.segmentBytes)})` +
      (r.segmentsGone > 0 ? `; ${r.segmentsGone} replaced meanwhile, rebuilt from the database at the first start` : ""),
    r.jwtSecret
      ? "  jwt-secret copied: dashboard sessions stay valid on the copy"
      : "  no jwt-secret file (the server is given its secret by QUARRY_JWT_SECRET or --jwt-secret): give the restored server the same secret",
    `Restore: quarry serve --data-dir ${destination} (or move it into place while no server runs).`,
  ];
  return lines.join("\n");
}

function count(n: number, noun: string): string {
  return `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`;
}

function size(bytes: number): string {
  const [unit, scale] = bytes >= 2 ** 30 ? ["GB", 2 ** 30] : bytes >= 2 ** 20 ? ["MB", 2 ** 20] : ["KB", 2 ** 10];
  return `${(bytes / scale).toFixed(1)} ${unit}`;
}
