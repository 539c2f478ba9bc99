// What an embedding model folder declares: sentence-transformers files, overridden by an optional quarry.json
// {id, dimension, maxTokens, pooling, output, queryPrefix, passagePrefix, longInputs, batchSize,
// lowercaseAllCapsWords}.
import { findOnnxModel, folderError, folderName, modelMaxLength, readOptionalJson } from "./model-folder.ts";
import type { Pooling } from "./pooling.ts";

export interface QuarryModelFile {
  id?: string;
  dimension?: number;
  /** Longest token sequence the model accepts, special tokens included (like max_seq_length). */
  maxTokens?: number;
  pooling?: Pooling;
  /** "sentence_embedding": the graph outputs the sentence vector itself; otherwise token vectors are pooled. */
  output?: "sentence_embedding" | "token_embeddings" | "last_hidden_state";
  queryPrefix?: string;
  passagePrefix?: string;
  /**
   * Texts longer than the model's window: "truncate" (default) keeps the first window; "windows" embeds
   * every consecutive window and averages them, for models with a short window (use-lite reads 128 tokens).
   */
  longInputs?: LongInputs;
  /**
   * Texts per ONNX run. 1 for a dynamically quantized graph (use-lite's int8 build): it picks one activation
   * scale for the whole batch tensor, so batching would make a text's vector depend on its batch neighbours.
   */
  batchSize?: number;
  /**
   * Lowercase words written in capitals ("MEASUREMENT OF DIELECTRIC CONSTANT") before tokenizing, for a
   * cased vocabulary that has pieces for "Measurement" and "measurement" but shatters "MEASUREMENT" into
   * letters (use-lite: vector nDCG@10 on the all-caps npl queries 0.003 → 0.179, the other collections
   * unchanged). Mixed-case words are kept as they are.
   */
  lowercaseAllCapsWords?: boolean;
}

export type LongInputs = "truncate" | "windows";

export interface EmbedderConfig {
  id: string;
  onnxPath: string;
  /** null when the graph outputs sentence vectors. */
  pooling: Pooling | null;
  /** Longest token sequence, special tokens included. */
  maxLength: number;
  /** Declared by quarry.json or config.json; checked against the real output at load. */
  declaredDimension?: number;
  queryPrefix: string;
  passagePrefix: string;
  longInputs: LongInputs;
  /** From quarry.json; the embedder's default when undefined. */
  batchSize?: number;
  lowercaseAllCapsWords: boolean;
}

/** Instruction prefixes the known model families were trained with, by model id. */
export function defaultPrefixes(id: string): { queryPrefix: string; passagePrefix: string } {
  const name = id.toLowerCase();
  if (/(^|[^a-z0-9])e5([^a-z0-9]|$)/.test(name)) return { queryPrefix: "query: ", passagePrefix: "passage: " };
  if (/bge-.*-en-v1\.5/.test(name)) {
    return { queryPrefix: "Represent this sentence for searching relevant passages: ", passagePrefix: "" };
  }
  return { queryPrefix: "", passagePrefix: "" };
}

const OUTPUTS = ["sentence_embedding", "token_embeddings", "last_hidden_state"];

export function readEmbedderConfig(dir: string): EmbedderConfig {
  const onnxPath = findOnnxModel(dir);
  const quarry = readOptionalJson<QuarryModelFile>(dir, "quarry.json") ?? {};
  if (quarry.output !== undefined && !OUTPUTS.includes(quarry.output)) {
    throw folderError(dir, `has a quarry.json with unknown "output": "${quarry.output}" (expected one of ${OUTPUTS.join(", ")})`);
  }
  const sentenceOutput = quarry.output === "sentence_embedding";
  // "pooling" only matters for token outputs; a sentence-embedding model may describe its own there.
  if (!sentenceOutput && quarry.pooling !== undefined && quarry.pooling !== "mean" && quarry.pooling !== "cls") {
    throw folderError(dir, `has a quarry.json with unknown "pooling": "${quarry.pooling}" (expected mean or cls)`);
  }
  if (quarry.longInputs !== undefined && quarry.longInputs !== "truncate" && quarry.longInputs !== "windows") {
    throw folderError(dir, `has a quarry.json with unknown "longInputs": "${quarry.longInputs}" (expected truncate or windows)`);
  }
  if (quarry.batchSize !== undefined && !(Number.isInteger(quarry.batchSize) && quarry.batchSize >= 1)) {
    throw folderError(dir, `has a quarry.json with "batchSize": ${JSON.stringify(quarry.batchSize)} (expected a whole number ≥ 1)`);
  }
  const id = quarry.id ?? folderName(dir);
  const config = readOptionalJson<{ hidden_size?: number }>(dir, "config.json");
  return {
    id,
    onnxPath,
    pooling: sentenceOutput ? null : (quarry.pooling ?? readPooling(dir)),
    maxLength: modelMaxLength(dir, quarry.maxTokens),
    declaredDimension: quarry.dimension ?? (sentenceOutput ? undefined : config?.hidden_size),
    ...defaultPrefixes(id),
    ...(quarry.queryPrefix !== undefined ? { queryPrefix: quarry.queryPrefix } : {}),
    ...(quarry.passagePrefix !== undefined ? { passagePrefix: quarry.passagePrefix } : {}),
    longInputs: quarry.longInputs ?? "truncate",
    batchSize: quarry.batchSize,
    lowercaseAllCapsWords: quarry.lowercaseAllCapsWords === true,
  };
}

function readPooling(dir: string): Pooling {
  const file = "1_Pooling/config.json";
  const pooling = readOptionalJson<Record<string, unknown>>(dir, file);
  if (!pooling) throw folderError(dir, `is missing ${file} (or a "pooling" of "mean" or "cls" in quarry.json)`);
  if (pooling.pooling_mode_mean_tokens) return "mean";
  if (pooling.pooling_mode_cls_token) return "cls";
  throw folderError(dir, `has a ${file} with a pooling mode other than mean or CLS, which Quarry does not support`);
}
