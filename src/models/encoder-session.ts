// An ONNX Runtime session for transformer encoders fed with token sequences: pads each batch to its
// longest row and feeds only the inputs the graph declares (input_ids, attention_mask, token_type_ids).
import type { InferenceSession, Tensor } from "onnxruntime-node";
import { loadOrt, type Ort } from "./onnx-runtime.ts";
import type { TokenSequence } from "./tokenize.ts";

export interface SessionOptions {
  /** Intra-op threads; ONNX Runtime's default (one per physical core) when omitted. */
  threads?: number;
  /**
   * Whether idle intra-op threads busy-wait for the next operator (ONNX Runtime's default). Off in the
   * server, whose search threads need the cores between two query embeddings.
   */
  spinning?: boolean;
}

const SUPPORTED_INPUTS = new Set(["input_ids", "attention_mask", "token_type_ids"]);

export interface OutputTensor {
  data: Float32Array;
  dims: readonly number[];
}

export class EncoderSession {
  private constructor(
    private readonly ort: Ort,
    private readonly session: InferenceSession,
    readonly outputName: string,
    private readonly padId: number,
  ) {}

  /** `outputs`: preferred output names in order; the graph's first output when none of them exists. */
  static async open(onnxPath: string, padId: number, outputs: string[], options: SessionOptions = {}): Promise<EncoderSession> {
    const ort = await loadOrt();
    let session: InferenceSession;
    try {
      session = await ort.InferenceSession.create(onnxPath, {
        graphOptimizationLevel: "all",
        executionMode: "sequential",
        interOpNumThreads: 1,
        ...(options.threads ? { intraOpNumThreads: options.threads } : {}),
        ...(options.spinning === false ? { extra: { session: { intra_op: { allow_spinning: "0" } } } } : {}),
      });
    } catch (error) {
      throw new Error(`Cannot load ONNX model ${onnxPath}: ${(error as Error).message}`);
    }
    const unsupported = session.inputNames.filter((name) => !SUPPORTED_INPUTS.has(name));
    if (unsupported.length > 0 || !session.inputNames.includes("input_ids")) {
      await session.release();
      throw new Error(
        `ONNX model ${onnxPath} has inputs [${session.inputNames.join(", ")}]; supported are input_ids (required), attention_mask, token_type_ids`,
      );
    }
    const outputName = outputs.find((name) => session.outputNames.includes(name)) ?? session.outputNames[0];
    return new EncoderSession(ort, session, outputName, padId);
  }

  /** Runs one batch; rows are padded at the end, so row i's real tokens are its first ids.length positions. */
  async run(rows: TokenSequence[]): Promise<OutputTensor> {
    const width = Math.max(...rows.map((row) => row.ids.length));
    const size = rows.length * width;
    const ids = new BigInt64Array(size).fill(BigInt(this.padId));
    const mask = new BigInt64Array(size);
    const typeIds = new BigInt64Array(size);
    rows.forEach((row, r) => {
      for (let i = 0; i < row.ids.length; i++) {
        ids[r * width + i] = BigInt(row.ids[i]);
        mask[r * width + i] = 1n;
        typeIds[r * width + i] = BigInt(row.typeIds[i]);
      }
    });
    const dims = [rows.length, width];
    const available: Record<string, Tensor> = {
      input_ids: new this.ort.Tensor("int64", ids, dims),
      attention_mask: new this.ort.Tensor("int64", mask, dims),
      token_type_ids: new this.ort.Tensor("int64", typeIds, dims),
    };
    const feeds = Object.fromEntries(this.session.inputNames.map((name) => [name, available[name]]));
    const result = await this.session.run(feeds, [this.outputName]);
    const output = result[this.outputName];
    return { data: output.data as Float32Array, dims: output.dims };
  }

  close(): Promise<void> {
    return this.session.release();
  }
}

/**
 * Calls `run` on batches of at most `batchSize` rows of similar length (less padding) and returns the
 * per-row results in the original order.
 */
export async function runInLengthSortedBatches<R>(
  rows: TokenSequence[],
  batchSize: number,
  run: (batch: TokenSequence[]) => Promise<R[]>,
): Promise<R[]> {
  const order = rows.map((_, i) => i).sort((a, b) => rows[a].ids.length - rows[b].ids.length);
  const results: R[] = new Array(rows.length);
  for (let start = 0; start < order.length; start += batchSize) {
    const indices = order.slice(start, start + batchSize);
    const batchResults = await run(indices.map((i) => rows[i]));
    indices.forEach((rowIndex, k) => (results[rowIndex] = batchResults[k]));
  }
  return results;
}
