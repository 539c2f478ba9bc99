// One server per data directory. Two would each sweep what they take for the other's leftovers (unfinished
// segment builds, stored files without a row) and build the same segments: a second `quarry serve` on a
// directory in use ends at once with a message instead. The lock is an flock on <data dir>/quarry.lock,
// which the OS lets go when the process ends, however it ends (kill -9 included): no stale lock to clear.
import { closeSync, fchmodSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { FFIType } from "bun:ffi";
import { openLibc } from "../runtime/libc.ts";
import { isNotPermitted } from "../file-errors.ts";

const LOCK_EX = 2;
const LOCK_NB = 4;

const libc = openLibc({ flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });

/** Takes the data directory for this process until the returned release is called; throws if another server holds it. */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, "quarry.lock");
  const fd = openSync(path, "a+", 0o600);
  try {
    fchmodSync(fd, 0o600); // one left by a copy of the data dir may have other modes
  } catch (error) {
    if (!isNotPermitted(error)) throw error; // another user's, which this one may still lock
  }
  if (libc && libc.symbols.flock(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd);
    const holder = readFileSync(path, "utf8").trim();
    throw new Error(`another Quarry server${/^\d+$/.test(holder) ? ` (pid ${holder})` : ""} is using the data directory ${dataDir}; stop it, or choose another data directory`);
  }
  ftruncateSync(fd, 0);
  writeSync(fd, `${process.pid}\n`);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    closeSync(fd);
  };
}
