// The small JSON files that sit next to model.onnx and tokenizer.json in models/use-lite/.
import type { UseLiteArchitecture, UseLiteWeights } from "./build-onnx-model.ts";
import { sourcePackage } from "./source-package.ts";

/** The file next to model.onnx that holds the values of its larger tensors (ONNX external data). */
export const WEIGHTS_FILE = "model.onnx.data";

/** Read by the generic ONNX embedder (src/models/onnx-embedder.ts). */
export function quarryJson(d: UseLiteArchitecture, weights: UseLiteWeights) {
  return {
    id: "use-lite",
    dimension: d.hiddenSize,
    // The TF graph only ever reads the first 128 tokens; the ONNX graph clips the same way.
    maxTokens: d.maxTokens,
    pooling: "none — output is the sentence embedding",
    output: "sentence_embedding",
    queryPrefix: "",
    passagePrefix: "",
    // Chunks are ~256–512 tokens: embed every 128-token window and average, so the whole chunk counts.
    longInputs: "windows",
    // The int8 graph quantizes each run's activations with one scale: run texts one by one, so a text's
    // vector never depends on what else is embedded with it (batching gained nothing here anyway).
    ...(weights === "int8" ? { batchSize: 1 } : {}),
    // Its vocabulary is cased: "MEASUREMENT" would be read letter by letter (see embedder-config.ts).
    lowercaseAllCapsWords: true,
  };
}

/** Hugging Face-style description of the architecture, for people and tools. */
export function configJson(d: UseLiteArchitecture, weights: UseLiteWeights) {
  return {
    model_type: "universal-sentence-encoder-lite",
    source: `${sourcePackage.name}@${sourcePackage.version} (TF.js graph model)`,
    license: "Apache-2.0",
    vocab_size: d.vocabSize,
    embedding_size: d.embeddingSize,
    hidden_size: d.hiddenSize,
    num_hidden_layers: d.layers,
    num_attention_heads: d.heads,
    intermediate_size: d.ffnSize,
    hidden_act: "relu",
    layer_norm_eps: d.layerNormEpsilon,
    position_encoding: "sinusoidal timing signal; the first layer sees 2 × embedding + timing, as in the TF graph",
    max_position_embeddings: d.maxTokens,
    pooling: "masked mean over tokens, then dense + tanh",
    output_l2_normalized: true,
    onnx_inputs: ["input_ids", "attention_mask"],
    onnx_output: "sentence_embedding",
    weights: weights === "int8" ? "dense-layer kernels int8 (7-bit codes, per output column), activations quantized per run; output head float32" : "float32",
  };
}

export function tokenizerConfigJson(d: UseLiteArchitecture) {
  return {
    tokenizer_class: "PreTrainedTokenizerFast",
    model_max_length: d.maxTokens,
    unk_token: "\uFFFD",
    clean_up_tokenization_spaces: false,
  };
}
