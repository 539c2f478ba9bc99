// How a sqlite-vec library that cannot be loaded is reported. In the single binary the library is unpacked
// into the data dir; SQLite's own error names a ".so.so" that does not exist and hides the likely cause.
import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { loadVectorExtension, setVectorExtensionPath } from "../../src/store/vector-extension.ts";

const dir = mkdtempSync(join(tmpdir(), "quarry-vec-"));
afterEach(() => setVectorExtensionPath(null));

test("an unpacked library that cannot be loaded names its path and what the data dir needs", () => {
  const broken = join(dir, "vec0.so");
  writeFileSync(broken, "not a shared object");
  setVectorExtensionPath(broken);
  const db = new Database(":memory:");
  expect(() => loadVectorExtension(db)).toThrow(`cannot load the sqlite-vec library ${broken} (`);
  expect(() => loadVectorExtension(db)).toThrow("the data dir must be on a filesystem that allows running programs (not mounted noexec)");
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the library the binary would unpack loads", () => {
  setVectorExtensionPath(getLoadablePath());
  const db = new Database(":memory:");
  loadVectorExtension(db);
  expect(db.query<{ v: string }, []>("SELECT vec_version() AS v").get()!.v).toMatch(/^v\d/);
  db.close();
});
