// Sentence embeddings from an ONNX model folder (Hugging Face sentence-transformers export layout, see
// embedder-config.ts): tokenize with the model's prefix, truncate, batch, run, pool, L2-normalize.
import type { EmbedResult, EmbedSide, Embedder } from "./types.ts";
import { readEmbedderConfig, type EmbedderConfig } from "./embedder-config.ts";
import { EncoderSession, runInLengthSortedBatches, type SessionOptions } from "./encoder-session.ts";
import { l2Normalize, poolTokens, splitRows } from "./pooling.ts";
import { ModelTokenizer } from "./tokenize.ts";

export interface EmbedderOptions extends SessionOptions {
  /** Texts per ONNX run; overrides the model folder's quarry.json batchSize (32 when neither sets it). */
  batchSize?: number;
}

export class OnnxEmbedder implements Embedder {
  readonly id: string;
  /**
   * Longest text embedded whole, in content tokens. Counts here, in countTokens and in EmbedResult.tokenCounts
   * exclude special tokens ([CLS], [SEP]) and include the prefix. With longInputs "windows" it is
   * MAX_WINDOWS model windows; otherwise one window.
   */
  readonly maxTokens: number;
  /** Content tokens the model reads in one run: its sequence length minus its special tokens. */
  private readonly windowTokens: number;

  private constructor(
    private readonly config: EmbedderConfig,
    private readonly tokenizer: ModelTokenizer,
    private readonly session: EncoderSession,
    readonly dimension: number,
    private readonly batchSize: number,
  ) {
    this.id = config.id;
    this.windowTokens = config.maxLength - tokenizer.specialTokenCount(false);
    this.maxTokens = config.longInputs === "windows" ? this.windowTokens * MAX_WINDOWS : this.windowTokens;
  }

  static async load(dir: string, options: EmbedderOptions = {}): Promise<OnnxEmbedder> {
    const config = readEmbedderConfig(dir);
    const tokenizer = ModelTokenizer.fromFolder(dir);
    const outputs = config.pooling ? ["last_hidden_state", "token_embeddings"] : ["sentence_embedding"];
    const session = await EncoderSession.open(config.onnxPath, tokenizer.padId, outputs, options);
    try {
      const dimension = await probeDimension(dir, config, tokenizer, session);
      return new OnnxEmbedder(config, tokenizer, session, dimension, options.batchSize ?? config.batchSize ?? 32);
    } catch (error) {
      await session.close();
      throw error;
    }
  }

  async embed(texts: string[], side: EmbedSide): Promise<EmbedResult> {
    const prefix = side === "query" ? this.config.queryPrefix : this.config.passagePrefix;
    const windowsPerText = texts.map((text) => this.windows(this.tokenizer.tokenIds(prefix + this.normalize(text))));
    const rows = windowsPerText.flat().map((ids) => this.tokenizer.single(ids));
    const windowVectors = await runInLengthSortedBatches(rows, this.batchSize, async (batch) => {
      const { data, dims } = await this.session.run(batch);
      const pooled = this.config.pooling
        ? poolTokens(data, dims, batch.map((row) => row.ids.length), this.config.pooling)
        : splitRows(data, dims);
      return pooled.map(l2Normalize);
    });
    let next = 0;
    const vectors = windowsPerText.map((windows) => {
      const parts = windowVectors.slice(next, (next += windows.length));
      return parts.length === 1 ? parts[0] : l2Normalize(weightedMean(parts, windows.map((w) => w.length)));
    });
    return { vectors, tokenCounts: windowsPerText.map((windows) => windows.reduce((n, w) => n + w.length, 0)) };
  }

  /** The token windows a text is embedded from: the first window, or all of them (longInputs "windows"). */
  private windows(ids: number[]): number[][] {
    if (this.config.longInputs === "truncate" || ids.length <= this.windowTokens) return [ids.slice(0, this.windowTokens)];
    const windows: number[][] = [];
    for (let start = 0; start < this.maxTokens && start < ids.length; start += this.windowTokens) {
      windows.push(ids.slice(start, start + this.windowTokens));
    }
    return windows;
  }

  /** Tokens of the text as a passage (prefix included, special tokens excluded), before truncation. */
  countTokens(text: string): number {
    return this.tokenizer.tokenIds(this.config.passagePrefix + this.normalize(text)).length;
  }

  /** The text as the model should read it (see EmbedderConfig.lowercaseAllCapsWords). */
  private normalize(text: string): string {
    return this.config.lowercaseAllCapsWords ? text.replace(ALL_CAPS_WORD, (word) => word.toLowerCase()) : text;
  }

  close(): Promise<void> {
    return this.session.close();
  }
}

/** Two or more capital letters standing as a whole word. */
const ALL_CAPS_WORD = /(?<![\p{L}\p{N}])\p{Lu}{2,}(?![\p{L}\p{N}])/gu;

/** Bounds the work for one very long text (a 10,000-character query): later windows are dropped. */
const MAX_WINDOWS = 16;

/** Mean of the vectors, each weighted by how many tokens it stands for. */
function weightedMean(vectors: Float32Array[], weights: number[]): Float32Array {
  const out = new Float32Array(vectors[0].length);
  vectors.forEach((v, i) => {
    for (let d = 0; d < out.length; d++) out[d] += v[d] * weights[i];
  });
  return out;
}

/** Embeds a probe text to learn the dimension and catch a model whose output is not what its files say. */
async function probeDimension(dir: string, config: EmbedderConfig, tokenizer: ModelTokenizer, session: EncoderSession): Promise<number> {
  const { dims } = await session.run([tokenizer.single(tokenizer.tokenIds("probe"))]);
  const expectedRank = config.pooling ? 3 : 2;
  if (dims.length !== expectedRank) {
    const expected = config.pooling ? "[batch, sequence, dim] token vectors" : "[batch, dim] sentence vectors";
    throw new Error(`Model folder ${dir}: output "${session.outputName}" has shape [${dims.join(", ")}], expected ${expected}`);
  }
  const dimension = dims[dims.length - 1];
  if (config.declaredDimension !== undefined && config.declaredDimension !== dimension) {
    throw new Error(`Model folder ${dir} declares dimension ${config.declaredDimension} but the model outputs ${dimension}`);
  }
  return dimension;
}
