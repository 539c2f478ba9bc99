// Reads the files of a Hugging Face model folder (ONNX export layout). Errors name the exact file.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";

export function folderError(dir: string, problem: string): Error {
  return new Error(`Model folder ${dir} ${problem}`);
}

/** Parsed JSON file of the folder, or undefined when the file does not exist. */
export function readOptionalJson<T = Record<string, unknown>>(dir: string, file: string): T | undefined {
  const path = join(dir, file);
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch (error) {
    throw folderError(dir, `has an unreadable ${file}: ${(error as Error).message}`);
  }
}

export function readRequiredJson<T = Record<string, unknown>>(dir: string, file: string, why = ""): T {
  const value = readOptionalJson<T>(dir, file);
  if (value === undefined) throw folderError(dir, `is missing ${file}${why}`);
  return value;
}

/**
 * The ONNX graph to run: onnx/model.onnx, else model.onnx, else the first onnx/model*.onnx by name
 * (exports that only ship a variant such as model_quantized.onnx).
 */
export function findOnnxModel(dir: string): string {
  if (!existsSync(dir)) throw folderError(dir, "does not exist");
  for (const candidate of ["onnx/model.onnx", "model.onnx"]) {
    if (existsSync(join(dir, candidate))) return join(dir, candidate);
  }
  const onnxDir = join(dir, "onnx");
  const variants = existsSync(onnxDir)
    ? readdirSync(onnxDir).filter((f) => f.startsWith("model") && f.endsWith(".onnx")).sort()
    : [];
  if (variants.length > 0) return join(onnxDir, variants[0]);
  throw folderError(dir, "is missing onnx/model.onnx (or model.onnx)");
}

/**
 * Longest token sequence the model accepts, special tokens included: `override` (quarry.json), else
 * sentence_bert_config.json max_seq_length, else the smaller of tokenizer_config.json model_max_length
 * and config.json max_position_embeddings.
 */
export function modelMaxLength(dir: string, override?: number): number {
  if (override !== undefined) return override;
  const sentenceBert = readOptionalJson<{ max_seq_length?: number }>(dir, "sentence_bert_config.json");
  if (sentenceBert?.max_seq_length) return sentenceBert.max_seq_length;
  const limits: number[] = [];
  const tokenizerConfig = readOptionalJson<{ model_max_length?: number }>(dir, "tokenizer_config.json");
  // Tokenizers without a limit store a huge sentinel (1e30) here.
  if (tokenizerConfig?.model_max_length && tokenizerConfig.model_max_length < 1e6) limits.push(tokenizerConfig.model_max_length);
  const config = readOptionalJson<{ max_position_embeddings?: number; model_type?: string }>(dir, "config.json");
  if (config?.max_position_embeddings) {
    // RoBERTa-family position ids start after the padding index, which costs two positions.
    const offset = config.model_type?.includes("roberta") ? 2 : 0;
    limits.push(config.max_position_embeddings - offset);
  }
  if (limits.length === 0) {
    // config.json may be there without the length (max_position_embeddings): say which.
    const missing = config ? "has no max_position_embeddings in config.json (nor max_seq_length in sentence_bert_config.json)" : "is missing config.json (or sentence_bert_config.json)";
    throw folderError(dir, `${missing}: cannot tell the model's maximum sequence length`);
  }
  return Math.min(...limits);
}

export function folderName(dir: string): string {
  return basename(dir.replace(/[\\/]+$/, ""));
}
