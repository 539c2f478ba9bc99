// Dropping files' pages from the OS page cache (posix_fadvise POSIX_FADV_DONTNEED), as if they had not been
// read since the machine started: for measuring and testing what searches do with segment files out of
// memory (bench:scale's cold restart, test/search/page-advice.test.ts). Only clean pages are dropped: a
// file just written must be synced first. Linux only (elsewhere nothing is dropped).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { FFIType } from "bun:ffi";
import { openLibc } from "../src/runtime/libc.ts";

const POSIX_FADV_DONTNEED = 4;
const O_RDONLY = 0;

const libc =
  process.platform === "linux"
    ? openLibc({
        open: { args: [FFIType.cstring, FFIType.i32], returns: FFIType.i32 },
        close: { args: [FFIType.i32], returns: FFIType.i32 },
        posix_fadvise: { args: [FFIType.i32, FFIType.i64, FFIType.i64, FFIType.i32], returns: FFIType.i32 },
      })
    : null;

/** Drops the pages of the file at `path`, or of every file under it when it is a directory. */
export function dropFromPageCache(path: string): void {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path)) dropFromPageCache(join(path, name));
    return;
  }
  if (!libc) return;
  const fd = libc.symbols.open(Buffer.from(`${path}\0`), O_RDONLY);
  if (fd < 0) throw new Error(`cannot open ${path} to drop its pages`);
  libc.symbols.posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  libc.symbols.close(fd);
}
