// Cross-encoder relevance scores from an ONNX model folder (ms-marco-MiniLM / bge-reranker export layout:
// onnx/model.onnx or model.onnx, tokenizer.json, config.json). Each (query, passage) pair is encoded as
// [CLS] query [SEP] passage [SEP] with token_type_ids 0 for the query segment and 1 for the passage.
import type { Reranker } from "./types.ts";
import { EncoderSession, runInLengthSortedBatches, type SessionOptions } from "./encoder-session.ts";
import { findOnnxModel, folderName, modelMaxLength, readOptionalJson } from "./model-folder.ts";
import { ModelTokenizer, truncatePair } from "./tokenize.ts";

export interface RerankerOptions extends SessionOptions {
  /** Pairs per ONNX run (default 16). */
  batchSize?: number;
}

export class OnnxReranker implements Reranker {
  private constructor(
    readonly id: string,
    private readonly tokenizer: ModelTokenizer,
    private readonly session: EncoderSession,
    /** Content tokens per pair: the model's sequence length minus the pair's special tokens. */
    private readonly pairBudget: number,
    private readonly batchSize: number,
  ) {}

  /** quarry.json may set {id, maxTokens} as for embedders; the id defaults to the folder name. */
  static async load(dir: string, options: RerankerOptions = {}): Promise<OnnxReranker> {
    const onnxPath = findOnnxModel(dir);
    const quarry = readOptionalJson<{ id?: string; maxTokens?: number }>(dir, "quarry.json") ?? {};
    const tokenizer = ModelTokenizer.fromFolder(dir);
    const budget = modelMaxLength(dir, quarry.maxTokens) - tokenizer.specialTokenCount(true);
    const session = await EncoderSession.open(onnxPath, tokenizer.padId, ["logits"], options);
    const probe = tokenizer.tokenIds("probe");
    const { dims } = await session.run([tokenizer.pair(probe, probe)]);
    if (dims.length > 2) {
      await session.close();
      throw new Error(`Model folder ${dir} is not a cross-encoder: output "${session.outputName}" has shape [${dims.join(", ")}], expected [batch, labels] logits`);
    }
    return new OnnxReranker(quarry.id ?? folderName(dir), tokenizer, session, budget, options.batchSize ?? 16);
  }

  /**
   * Relevance in [0, 1] per passage, in passage order. One logit per pair: sigmoid(logit). Several logits
   * per pair (e.g. [not relevant, relevant]): the softmax probability of the last class.
   */
  async score(query: string, passages: string[]): Promise<number[]> {
    const queryIds = this.tokenizer.tokenIds(query);
    const rows = passages.map((passage) => {
      const [a, b] = truncatePair(queryIds, this.tokenizer.tokenIds(passage), this.pairBudget);
      return this.tokenizer.pair(a, b);
    });
    return runInLengthSortedBatches(rows, this.batchSize, async (batch) => {
      const { data, dims } = await this.session.run(batch);
      const labels = dims.length === 1 ? 1 : dims[dims.length - 1];
      return batch.map((_, r) => relevance(data.subarray(r * labels, (r + 1) * labels)));
    });
  }

  close(): Promise<void> {
    return this.session.close();
  }
}

function relevance(logits: Float32Array): number {
  if (logits.length === 1) return 1 / (1 + Math.exp(-logits[0]));
  const max = Math.max(...logits);
  let total = 0;
  for (const logit of logits) total += Math.exp(logit - max);
  return Math.exp(logits[logits.length - 1] - max) / total;
}
