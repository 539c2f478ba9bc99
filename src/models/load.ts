// Resolves the configured model names to folders and loads them; describes what was loaded for the
// health endpoint and the startup banner.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { LoadedModels, ModelsDescription, QueryEmbedder, Reranker } from "./types.ts";
import { OnnxEmbedder } from "./onnx-embedder.ts";
import { OnnxReranker } from "./onnx-reranker.ts";
import { loadOrt } from "./onnx-runtime.ts";

export interface LoadModelsOptions {
  /** QUARRY_MODELS_DIR: searched first for every model name. */
  modelsDir: string;
  embedModel: string;
  /** null or undefined: no reranker. */
  rerankModel?: string | null;
  /** Intra-op threads per model session; ONNX Runtime's default when omitted. */
  threads?: number;
  /** Intra-op threads of the embedding model's session, when not `threads`. */
  embedThreads?: number;
  /** See SessionOptions.spinning. */
  spinning?: boolean;
}


/** Models generated at install time (models/use-lite); a compiled binary unpacks its embedded copy (src/runtime). */
export let BUILT_IN_MODELS_DIR = resolve(import.meta.dir, "../../models");

export function setBuiltInModelsDir(dir: string): void {
  BUILT_IN_MODELS_DIR = dir;
}

function installHint(modelsDir: string, name: string): string {
  return (
    `To install a model, copy its Hugging Face folder (an ONNX export: onnx/model.onnx or model.onnx, ` +
    `tokenizer.json, config.json) into ${join(modelsDir, name)} (the models folder is QUARRY_MODELS_DIR).`
  );
}

/** The folder for a model name: <modelsDir>/<name>, else the built-in models/<name>. */
export function resolveModelDir(modelsDir: string, name: string, role: "Embedding" | "Reranking"): string {
  const candidates = [...new Set([join(modelsDir, name), join(BUILT_IN_MODELS_DIR, name)])];
  const found = candidates.find((dir) => existsSync(dir));
  if (found) return found;
  throw new Error(`${role} model "${name}" not found: no folder ${candidates.join(" or ")}. ${installHint(modelsDir, name)}`);
}

/** Loads a model from its folder; errors say which file is missing or broken and how to install a model. */
async function loadFrom<T>(modelsDir: string, name: string, role: "Embedding" | "Reranking", load: (dir: string) => Promise<T>): Promise<T> {
  const dir = resolveModelDir(modelsDir, name, role);
  try {
    return await load(dir);
  } catch (error) {
    throw new Error(`${role} model "${name}" cannot be loaded: ${(error as Error).message}. ${installHint(modelsDir, name)}`, {
      cause: error,
    });
  }
}

export async function loadModels(opts: LoadModelsOptions): Promise<LoadedModels> {
  const embedder = await loadEmbedder(opts);
  let reranker: Reranker | null = null;
  if (opts.rerankModel) {
    try {
      reranker = await loadReranker(opts);
    } catch (error) {
      await embedder.close();
      throw error;
    }
  }
  return { embedder, reranker, description: describeModels(embedder, reranker) };
}

/** The embedding model of `opts`. */
export async function loadEmbedder(opts: LoadModelsOptions): Promise<OnnxEmbedder> {
  // The runtime first, so that a runtime problem is not reported as a model folder problem.
  await loadOrt();
  return loadFrom(opts.modelsDir, opts.embedModel, "Embedding", (dir) =>
    OnnxEmbedder.load(dir, { threads: opts.embedThreads ?? opts.threads, spinning: opts.spinning }),
  );
}

/** The reranking model of `opts` (its rerankModel must be set). */
export async function loadReranker(opts: LoadModelsOptions): Promise<OnnxReranker> {
  await loadOrt();
  return loadFrom(opts.modelsDir, opts.rerankModel!, "Reranking", (dir) => OnnxReranker.load(dir, { threads: opts.threads, spinning: opts.spinning }));
}

/** What GET /api/health says of the models. It answers anyone, so it names no path on the server. */
export function describeModels(embedder: QueryEmbedder, reranker: Reranker | null): ModelsDescription {
  return {
    embedding: { id: embedder.id, dimension: embedder.dimension, max_tokens: embedder.maxTokens },
    reranker: reranker ? { id: reranker.id } : null,
    reranking_hint: reranker
      ? null
      : "Reranking is unavailable: copy a cross-encoder (e.g. ms-marco-MiniLM-L-6-v2 ONNX export) into <models dir>/<name> (QUARRY_MODELS_DIR) and set QUARRY_RERANK_MODEL=<name>",
  };
}
