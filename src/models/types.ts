// The contracts that search and ingestion depend on. Concrete models live beside this file.

/** Which side of an asymmetric retrieval model a text is embedded for. */
export type EmbedSide = "query" | "passage";

export interface EmbedResult {
  /** One L2-normalized vector per input text, in input order. */
  vectors: Float32Array[];
  /** Tokens the model consumed per input text (after truncation). */
  tokenCounts: number[];
}

export interface Embedder {
  /** Stable identifier recorded with every vector, e.g. "use-lite" or "bge-small-en-v1.5". */
  readonly id: string;
  readonly dimension: number;
  /** Longest input in tokens; longer inputs are truncated. */
  readonly maxTokens: number;
  embed(texts: string[], side: EmbedSide): Promise<EmbedResult>;
  /** Token count of a text with this model's tokenizer (used by the chunker). */
  countTokens(text: string): number;
  close(): Promise<void>;
}

export interface Reranker {
  readonly id: string;
  /** Relevance of each passage to the query, in [0,1], in passage order. */
  score(query: string, passages: string[]): Promise<number[]>;
  close(): Promise<void>;
}

/** What search needs of an embedder: queries are embedded, never chunked. */
export type QueryEmbedder = Omit<Embedder, "countTokens">;

/** The models search uses: loaded in this thread (load.ts) or on model threads (threaded-models.ts). */
export interface SearchModels {
  embedder: QueryEmbedder;
  reranker: Reranker | null;
  /** What health and the startup banner show. */
  description: ModelsDescription;
}

/** The models as loaded in this thread from configuration (see load.ts). */
export interface LoadedModels extends SearchModels {
  embedder: Embedder;
}

/** The models in use as GET /api/health shows them (the API's field names, hence snake_case). */
export interface ModelsDescription {
  embedding: { id: string; dimension: number; max_tokens: number };
  reranker: { id: string } | null;
  /** How to enable reranking; null when a reranker is loaded. */
  reranking_hint: string | null;
}
