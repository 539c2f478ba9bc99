// Generates tiny, deterministic ONNX models for the model-runtime tests (test/models/) into
// test/.generated/models/. Every folder also holds weights.json so tests can recompute the forward pass.
// Idempotent: returns at once when the outputs match this generator's source.
//
//   tiny-encoder/           BERT-shaped encoder (onnx/model.onnx), mean pooling, max_seq_length 16
//   tiny-encoder-cls/       the same weights with CLS pooling
//   tiny-sentence-encoder/  the same encoder with mean pooling inside the graph: output sentence_embedding,
//                           inputs input_ids + attention_mask only (the layout of the converted USE-Lite)
//   tiny-reranker/          cross-encoder, one logit per pair from the CLS vector, max length 24
//   tiny-reranker-2logit/   cross-encoder with two logits per pair
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { DataType, OnnxGraph } from "./onnx/onnx-graph.ts";
import { uniform } from "./seeded-random.ts";

export const TEST_MODELS_DIR = resolve(import.meta.dir, "../test/.generated/models");

const HIDDEN = 32;
const ENCODER_MAX_LENGTH = 16;
const RERANKER_MAX_LENGTH = 24;

const SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const WORDS = `the of and to in is was for on that with as by it are be this from at or an which were
have has not but had can their they its been also more one two new first other all about into than
these may would only after most over such some time when used use made between both each well then
there where how what who what under during through before while high low large small long short same
different data system model method result results study water air flow heat pressure wing surface
test tests theory problem problems effect effects value values number case cases form order rate
patient patients cell cells blood disease treatment growth cancer tissue acid protein normal level
levels library libraries information retrieval search query queries document documents index indexing
book books text word words language computer science research paper papers journal author authors
knowledge base question answer answers relevant relevance passage passages represent sentence
searching ranking score scores vector vectors embedding token tokens quick brown fox jumps lazy dog
cat cats house garden river mountain city country world people person child children year years day
days night light dark red green blue black white good bad old young early late great little big
make makes making find finds found give gives given take takes taken show shows shown work works
worked learn learning machine network networks neural deep layer layers attention mean pooling
velocity boundary layer shock mach number supersonic subsonic laminar turbulent jet plate cylinder
dose drug drugs therapy clinical hospital infection virus bacteria gene genes human mouse rat`
  .split(/\s+/)
  .filter((w, i, all) => w && all.indexOf(w) === i);
const LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789".split("");
const SUFFIXES = ["s", "es", "ed", "ing", "ly", "er", "ers", "est", "tion", "ions", "al", "ity", "ness", "ment"];
const PUNCTUATION = ".,;:!?'\"()-/".split("");

/** BERT-style vocabulary: specials, punctuation, letters (so any ASCII word tokenizes), words, ## pieces. */
export const VOCAB: string[] = [
  ...SPECIAL_TOKENS,
  ...PUNCTUATION,
  ...LETTERS,
  ...WORDS.filter((w) => !LETTERS.includes(w)),
  ...[...SUFFIXES, ...LETTERS].map((p) => `##${p}`),
];

function tokenizerJson() {
  const special = (content: string) => ({
    id: VOCAB.indexOf(content),
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const token = (id: string, typeId: number) => ({ SpecialToken: { id, type_id: typeId } });
  const sequence = (id: "A" | "B", typeId: number) => ({ Sequence: { id, type_id: typeId } });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map(special),
    normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [token("[CLS]", 0), sequence("A", 0), token("[SEP]", 0)],
      pair: [token("[CLS]", 0), sequence("A", 0), token("[SEP]", 0), sequence("B", 1), token("[SEP]", 1)],
      special_tokens: Object.fromEntries(
        ["[CLS]", "[SEP]"].map((t) => [t, { id: t, ids: [VOCAB.indexOf(t)], tokens: [t] }]),
      ),
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(VOCAB.map((t, i) => [t, i])),
    },
  };
}

/** Weights of the tiny encoder; matrices are [in][out] as in ONNX MatMul, values exactly float32. */
export interface EncoderWeights {
  word: number[][];
  position: number[][];
  tokenType: number[][];
  query: number[][];
  queryBias: number[];
  key: number[][];
  keyBias: number[];
  value: number[][];
  valueBias: number[];
  dense: number[][];
  denseBias: number[];
  /** Cross-encoders only: [hidden][labels]. */
  classifier?: number[][];
  classifierBias?: number[];
}

function makeWeights(seed: number, maxLength: number, labels?: number): EncoderWeights {
  const next = uniform(seed); // the same weights on every machine
  const value = (scale: number) => Math.fround((next() * 2 - 1) * scale);
  const matrix = (rows: number, cols: number, scale: number) =>
    Array.from({ length: rows }, () => Array.from({ length: cols }, () => value(scale)));
  const vector = (n: number, scale: number) => Array.from({ length: n }, () => value(scale));
  const weights: EncoderWeights = {
    word: matrix(VOCAB.length, HIDDEN, 1),
    position: matrix(maxLength, HIDDEN, 0.5),
    tokenType: matrix(2, HIDDEN, 0.5),
    query: matrix(HIDDEN, HIDDEN, 0.3),
    queryBias: vector(HIDDEN, 0.1),
    key: matrix(HIDDEN, HIDDEN, 0.3),
    keyBias: vector(HIDDEN, 0.1),
    value: matrix(HIDDEN, HIDDEN, 0.3),
    valueBias: vector(HIDDEN, 0.1),
    dense: matrix(HIDDEN, HIDDEN, 0.3),
    denseBias: vector(HIDDEN, 0.1),
  };
  if (labels) {
    weights.classifier = matrix(HIDDEN, labels, 0.5);
    weights.classifierBias = vector(labels, 0.1);
  }
  return weights;
}

/** Scale applied inside tiny-sentence-encoder so its output is not already unit length. */
export const SENTENCE_OUTPUT_SCALE = 3;

type Head = "hidden" | "sentence" | "logits";

/**
 * Embeddings (word + position + token type) → one single-head self-attention layer that masks padded keys
 * with -10000 → residual → tanh(dense). Heads: the hidden states, masked mean × SENTENCE_OUTPUT_SCALE,
 * or classifier logits from the first ([CLS]) position.
 */
function encoderModel(w: EncoderWeights, head: Head): Uint8Array {
  const g = new OnnxGraph();
  const flat = (m: number[][]) => m.flat();
  const ids = g.input("input_ids", DataType.INT64, ["batch", "sequence"]);
  const mask = g.input("attention_mask", DataType.INT64, ["batch", "sequence"]);

  const words = g.op("Gather", [g.floats("word_embeddings", [VOCAB.length, HIDDEN], flat(w.word)), ids]);
  const seqLen = g.op("Gather", [g.op("Shape", [ids]), g.ints("one_index", [], [1])]);
  const positionIds = g.op("Range", [g.ints("zero", [], [0]), seqLen, g.ints("step", [], [1])]);
  const positions = g.op("Gather", [g.floats("position_embeddings", [w.position.length, HIDDEN], flat(w.position)), positionIds]);
  let tokenTypes: string;
  if (head === "sentence") {
    tokenTypes = g.floats("token_type_zero", [HIDDEN], w.tokenType[0]);
  } else {
    const typeIds = g.input("token_type_ids", DataType.INT64, ["batch", "sequence"]);
    tokenTypes = g.op("Gather", [g.floats("token_type_embeddings", [2, HIDDEN], flat(w.tokenType)), typeIds]);
  }
  const h0 = g.op("Add", [g.op("Add", [words, positions]), tokenTypes]);

  const project = (name: string, m: number[][], bias: number[], x: string) =>
    g.op("Add", [g.op("MatMul", [x, g.floats(name, [HIDDEN, m[0].length], flat(m))]), g.floats(`${name}_bias`, [bias.length], bias)]);
  const q = project("query", w.query, w.queryBias, h0);
  const k = project("key", w.key, w.keyBias, h0);
  const v = project("value", w.value, w.valueBias, h0);
  const scores = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], { perm: [0, 2, 1] })]), g.floats("scale", [], [1 / Math.sqrt(HIDDEN)])]);
  const maskFloat = g.op("Cast", [mask], { to: DataType.FLOAT });
  const maskBias = g.op("Mul", [g.op("Sub", [g.floats("one", [], [1]), maskFloat]), g.floats("neg_large", [], [-10000])]);
  const keyMask = g.op("Unsqueeze", [maskBias, g.ints("axis_1", [1], [1])]);
  const probs = g.op("Softmax", [g.op("Add", [scores, keyMask])], { axis: -1 });
  const h1 = g.op("Add", [h0, g.op("MatMul", [probs, v])]);
  const hiddenName = head === "hidden" ? "last_hidden_state" : undefined;
  const hidden = g.op("Tanh", [project("dense", w.dense, w.denseBias, h1)], {}, hiddenName);

  if (head === "hidden") {
    g.output("last_hidden_state", DataType.FLOAT, ["batch", "sequence", HIDDEN]);
  } else if (head === "sentence") {
    const tokenMask = g.op("Unsqueeze", [maskFloat, g.ints("axis_2", [1], [2])]);
    const seqAxis = g.ints("axis_seq", [1], [1]);
    const summed = g.op("ReduceSum", [g.op("Mul", [hidden, tokenMask]), seqAxis], { keepdims: 0 });
    const counts = g.op("ReduceSum", [tokenMask, seqAxis], { keepdims: 0 });
    const mean = g.op("Div", [summed, counts]);
    g.op("Mul", [mean, g.floats("output_scale", [], [SENTENCE_OUTPUT_SCALE])], {}, "sentence_embedding");
    g.output("sentence_embedding", DataType.FLOAT, ["batch", HIDDEN]);
  } else {
    const cls = g.op("Gather", [hidden, g.ints("cls_index", [], [0])], { axis: 1 });
    const labels = w.classifier![0].length;
    const logits = g.op("MatMul", [cls, g.floats("classifier", [HIDDEN, labels], flat(w.classifier!))]);
    g.op("Add", [logits, g.floats("classifier_bias", [labels], w.classifierBias!)], {}, "logits");
    g.output("logits", DataType.FLOAT, ["batch", labels]);
  }
  return g.serialize();
}

function poolingConfig(mode: "mean" | "cls") {
  return {
    word_embedding_dimension: HIDDEN,
    pooling_mode_cls_token: mode === "cls",
    pooling_mode_mean_tokens: mode === "mean",
    pooling_mode_max_tokens: false,
    pooling_mode_mean_sqrt_len_tokens: false,
  };
}

function bertConfig(maxLength: number, labels?: number) {
  return {
    model_type: "bert",
    architectures: [labels ? "BertForSequenceClassification" : "BertModel"],
    hidden_size: HIDDEN,
    num_attention_heads: 1,
    num_hidden_layers: 1,
    max_position_embeddings: maxLength,
    type_vocab_size: 2,
    vocab_size: VOCAB.length,
    pad_token_id: 0,
    ...(labels ? { num_labels: labels } : {}),
  };
}

function writeFolder(dir: string, files: Record<string, Uint8Array | object>): void {
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content instanceof Uint8Array ? content : JSON.stringify(content, null, 1));
  }
}

function generateInto(root: string): void {
  const tokenizer = tokenizerJson();
  const encoder = makeWeights(1, ENCODER_MAX_LENGTH);
  const sentenceBert = { max_seq_length: ENCODER_MAX_LENGTH, do_lower_case: false };
  writeFolder(join(root, "tiny-encoder"), {
    "onnx/model.onnx": encoderModel(encoder, "hidden"),
    "tokenizer.json": tokenizer,
    "config.json": bertConfig(ENCODER_MAX_LENGTH),
    "1_Pooling/config.json": poolingConfig("mean"),
    "sentence_bert_config.json": sentenceBert,
    "weights.json": encoder,
  });
  writeFolder(join(root, "tiny-encoder-cls"), {
    "onnx/model.onnx": encoderModel(encoder, "hidden"),
    "tokenizer.json": tokenizer,
    "config.json": bertConfig(ENCODER_MAX_LENGTH),
    "1_Pooling/config.json": poolingConfig("cls"),
    "sentence_bert_config.json": sentenceBert,
    "weights.json": encoder,
  });
  writeFolder(join(root, "tiny-sentence-encoder"), {
    "model.onnx": encoderModel(encoder, "sentence"),
    "tokenizer.json": tokenizer,
    "quarry.json": { output: "sentence_embedding", dimension: HIDDEN, maxTokens: ENCODER_MAX_LENGTH },
    "weights.json": encoder,
  });
  for (const [name, labels, seed] of [["tiny-reranker", 1, 2], ["tiny-reranker-2logit", 2, 3]] as const) {
    const weights = makeWeights(seed, RERANKER_MAX_LENGTH, labels);
    writeFolder(join(root, name), {
      "model.onnx": encoderModel(weights, "logits"),
      "tokenizer.json": tokenizer,
      "config.json": bertConfig(RERANKER_MAX_LENGTH, labels),
      "weights.json": weights,
    });
  }
}

/** Identifies the generator version: outputs are rebuilt whenever this file or the ONNX writer changes. */
function sourceStamp(): string {
  const sources = [import.meta.path, join(import.meta.dir, "onnx/onnx-graph.ts"), join(import.meta.dir, "use-lite/onnx-proto.ts")].map((p) => readFileSync(p, "utf8"));
  return Bun.hash(sources.join("\0")).toString(16);
}

/** Writes the test models unless they are already up to date; returns their folder. */
export function generateTestModels(outDir: string = TEST_MODELS_DIR): string {
  const stamp = sourceStamp();
  const stampFile = join(outDir, ".stamp");
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp) return outDir;
  // Build beside the target and swap it in, so a concurrent reader never sees a half-written folder.
  const staging = `${outDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  generateInto(staging);
  writeFileSync(join(staging, ".stamp"), stamp);
  rmSync(outDir, { recursive: true, force: true });
  renameSync(staging, outDir);
  return outDir;
}

if (import.meta.main) {
  const started = performance.now();
  const dir = generateTestModels();
  console.log(`test models ready in ${dir} (${Math.round(performance.now() - started)} ms)`);
}
