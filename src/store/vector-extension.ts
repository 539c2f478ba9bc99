// Loads sqlite-vec. Under `bun run` the npm package knows where its library is; the compiled binary
// ships the library as an embedded file that must be written to disk before SQLite can load it.
import type { Database } from "bun:sqlite";
import { getLoadablePath } from "sqlite-vec";

let overridePath: string | null = null;

/** Set by the single-binary bootstrap to the extracted library path. */
export function setVectorExtensionPath(path: string): void {
  overridePath = path;
}

export function loadVectorExtension(db: Database): void {
  db.loadExtension(overridePath ?? getLoadablePath());
}
