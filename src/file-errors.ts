// Telling storage failures apart: the path that is not there (ENOENT), a file or folder that a deletion, a
// newer segment or another thread removed meanwhile, which callers pass over or report as gone; and a
// write that found its disk (or the user's quota) full, SQLite's or the file system's, reported as such; and a
// change this user may not make.

export function isGone(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "ENOENT";
}

export function isOutOfSpace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_FULL" || code === "ENOSPC" || code === "EDQUOT";
}

/** A change the file system does not let this user make (another user's file, a read-only mount). */
export function isNotPermitted(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "EPERM" || code === "EACCES" || code === "EROFS";
}
