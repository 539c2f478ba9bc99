// The install folder of a package that reads its own data files at run time (PACKAGE_DATA): node_modules
// under `bun run`, the copy unpacked by prepareRuntime in a compiled binary.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PACKAGE_DATA, PACKAGES_DIR, RUNTIME_DIR_ENV } from "./layout.ts";

export function packageDir(name: keyof typeof PACKAGE_DATA): string {
  if (!Bun.isStandaloneExecutable) return dirname(fileURLToPath(import.meta.resolve(`${name}/package.json`)));
  const runtimeDir = process.env[RUNTIME_DIR_ENV];
  if (!runtimeDir) throw new Error(`The data files of ${name} are not unpacked yet: call prepareRuntime (src/runtime) first`);
  return join(runtimeDir, PACKAGES_DIR, name);
}
