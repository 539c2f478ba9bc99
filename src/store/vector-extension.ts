// Loads sqlite-vec. Under `bun run` the npm package knows where its library is; the compiled binary
// ships the library as an embedded file that must be written to disk before SQLite can load it.
import type { Database } from "bun:sqlite";
import { getLoadablePath } from "sqlite-vec";

let overridePath: string | null = null;

/** Set by the single-binary bootstrap to the extracted library path (null: the npm package's). */
export function setVectorExtensionPath(path: string | null): void {
  overridePath = path;
}

export function loadVectorExtension(db: Database): void {
  const path = overridePath ?? getLoadablePath();
  try {
    db.loadExtension(path);
  } catch (error) {
    // SQLite retries with ".so" appended and reports that attempt's error ("vec0.so.so: … No such file"),
    // which hides the usual cause in the binary: a data dir mounted noexec, where unpacked libraries cannot load.
    const where = overridePath ? "; the data dir must be on a filesystem that allows running programs (not mounted noexec)" : "";
    throw new Error(`cannot load the sqlite-vec library ${path} (${(error as Error).message})${where}`);
  }
}
