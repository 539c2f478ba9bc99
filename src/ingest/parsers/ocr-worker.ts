// Our own entry for tesseract.js's worker thread (instead of the script it would spawn from
// node_modules). Everything the worker needs, the wasm build of Tesseract and the English model,
// is imported here so `bun build --compile` embeds it, and nothing is ever fetched: the adapter
// serves the bundled model for every language-data read and refuses network access.
import { readFile } from "node:fs/promises";
import { parentPort } from "node:worker_threads";
import { gunzipSync } from "node:zlib";
import { relaxedSimd, simd } from "wasm-feature-detect";
// @ts-expect-error tesseract.js ships no types for its worker script
import workerScript from "tesseract.js/src/worker-script/index.js";
import englishModelPath from "@tesseract.js-data/eng/4.0.0_best_int/eng.traineddata.gz" with { type: "file" };

type CoreFactory = (options: object) => Promise<unknown>;
let core: CoreFactory | undefined;

// The *.wasm.js builds inline their wasm, so they need no file next to them at run time.
async function loadCore(): Promise<CoreFactory> {
  if (await relaxedSimd()) return require("tesseract.js-core/tesseract-core-relaxedsimd-lstm.wasm.js");
  if (await simd()) return require("tesseract.js-core/tesseract-core-simd-lstm.wasm.js");
  return require("tesseract.js-core/tesseract-core-lstm.wasm.js");
}

workerScript.setAdapter({
  getCore: async () => (core ??= await loadCore()),
  gunzip: gunzipSync,
  fetch: () => Promise.reject(new Error("OCR language data is bundled; nothing is downloaded")),
  readCache: async (path: string) => {
    if (!path.endsWith("/eng.traineddata")) throw new Error(`No bundled OCR data for ${path}`);
    return readFile(englishModelPath);
  },
  writeCache: async () => {},
  deleteCache: async () => {},
  checkCache: async () => false,
});

parentPort!.on("message", (packet) => {
  workerScript.dispatchHandlers(packet, (message: unknown) => parentPort!.postMessage(message));
});
