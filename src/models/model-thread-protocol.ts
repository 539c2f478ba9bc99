// Messages between the HTTP thread and a model thread (model-thread.ts), which holds one model.
import type { EmbedResult, EmbedSide } from "./types.ts";
import type { LoadModelsOptions } from "./load.ts";

export type ModelRole = "embedder" | "reranker";

export type ToModelThread =
  | { type: "load"; role: ModelRole; dataDir: string; options: LoadModelsOptions }
  | { type: "embed"; id: number; texts: string[]; side: EmbedSide }
  | { type: "rerank"; id: number; query: string; passages: string[] }
  | { type: "close" };

export type FromModelThread =
  /** The model is loaded: its id, and for an embedder its dimension and longest input. */
  | { type: "loaded"; id: string; dimension: number; maxTokens: number }
  | { type: "load-failed"; message: string }
  | { type: "embedded"; id: number; result: EmbedResult }
  | { type: "reranked"; id: number; scores: number[] }
  | { type: "failed"; id: number; message: string }
  | { type: "closed" };
