// The single-binary bootstrap. Under `bun run` every module finds its files in node_modules and models/,
// and this does nothing. In a `bun build --compile` executable it unpacks the embedded native code and
// built-in models next to the data dir and points the modules that load them there. Call it in every
// JS context (main thread and each worker) before anything opens the database or loads a model;
// repeated calls are cheap.
import { join } from "node:path";
import { setVectorExtensionPath } from "../store/vector-extension.ts";
import { setBuiltInModelsDir } from "../models/load.ts";
import { extractEmbeddedRuntime, removeOtherBuilds } from "./extract.ts";
import { MODELS_DIR, RUNTIME_DIR_ENV, VECTOR_EXTENSION_FILE } from "./layout.ts";

export async function prepareRuntime(dataDir: string): Promise<void> {
  if (!Bun.isStandaloneExecutable) return;
  const dir = await extractEmbeddedRuntime(dataDir);
  process.env[RUNTIME_DIR_ENV] = dir;
  setVectorExtensionPath(join(dir, VECTOR_EXTENSION_FILE));
  setBuiltInModelsDir(join(dir, MODELS_DIR));
}

/** Removes other builds' unpacked files; call only while holding the data dir (store/data-dir-lock.ts). */
export async function removeOtherRuntimes(dataDir: string): Promise<void> {
  if (Bun.isStandaloneExecutable) await removeOtherBuilds(dataDir);
}
