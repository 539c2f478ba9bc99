// Telling apart, among filesystem failures, the path that is not there (ENOENT): a file or folder that a
// deletion, a newer segment or another thread removed meanwhile, which callers pass over or report as gone.

export function isGone(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "ENOENT";
}
