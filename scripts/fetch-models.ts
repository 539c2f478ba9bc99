#!/usr/bin/env bun
// For machines WITH internet access: downloads pinned revisions of bge-small-en-v1.5 (embedder) and
// ms-marco-MiniLM-L-6-v2 (cross-encoder reranker) into models/, verifying every file's SHA-256.
// Copy the resulting folders to an air-gapped machine's QUARRY_MODELS_DIR, or run `npm run build` to embed them.
//   bun scripts/fetch-models.ts [--dir models]
// Quarry itself never downloads anything; this script is the only code that touches the network.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

interface PinnedFile {
  /** Path in the Hugging Face repository at the pinned revision. */
  source: string;
  /** Path inside the local model folder. */
  target: string;
  sha256: string;
}

interface PinnedModel {
  name: string;
  repo: string;
  revision: string;
  files: PinnedFile[];
  /** Written as quarry.json: what the folder's own files do not say. */
  quarry: Record<string, unknown>;
  /** Builds tokenizer.json from vocab.txt for exports that ship only the WordPiece vocabulary. */
  wordPieceFromVocab?: boolean;
}

const MODELS: PinnedModel[] = [
  {
    name: "bge-small-en-v1.5",
    repo: "BAAI/bge-small-en-v1.5",
    revision: "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a",
    files: [
      { source: "onnx/model.onnx", target: "onnx/model.onnx", sha256: "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35" },
      { source: "tokenizer.json", target: "tokenizer.json", sha256: "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66" },
      { source: "config.json", target: "config.json", sha256: "094f8e891b932f2000c92cfc663bac4c62069f5d8af5b5278c4306aef3084750" },
    ],
    // bge uses the [CLS] vector; its query instruction is applied by the embedder (see src/models/embedder-config.ts).
    quarry: { id: "bge-small-en-v1.5", pooling: "cls", maxTokens: 512 },
  },
  {
    name: "ms-marco-MiniLM-L-6-v2",
    repo: "Xenova/ms-marco-MiniLM-L-6-v2",
    revision: "a09144355adeed5f58c8ed011d209bf8ee5a1fec",
    files: [
      { source: "onnx/model_quantized.onnx", target: "onnx/model.onnx", sha256: "e9d8ebf845c413e981c175bfe49a3bfa9b3dcce2a3ba54875ee5df5a58639fbe" },
      { source: "vocab.txt", target: "vocab.txt", sha256: "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3" },
    ],
    quarry: { id: "ms-marco-MiniLM-L-6-v2", maxTokens: 512 },
    wordPieceFromVocab: true,
  },
];

/** A BERT uncased WordPiece tokenizer.json equivalent to the vocab.txt the cross-encoder was trained with. */
function wordPieceTokenizer(vocabText: string): unknown {
  const vocab: Record<string, number> = {};
  vocabText.split("\n").forEach((token, id) => {
    if (token !== "") vocab[token.replace(/\r$/, "")] = id;
  });
  const special = (token: string) => ({ id: token, type_id: 0 });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].map((content) => ({
      id: vocab[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
    })),
    normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: special("[CLS]") }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: special("[SEP]") }],
      pair: [
        { SpecialToken: special("[CLS]") }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: special("[SEP]") },
        { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: "[SEP]", type_id: 1 } },
      ],
      special_tokens: Object.fromEntries(["[CLS]", "[SEP]"].map((t) => [t, { id: t, ids: [vocab[t]], tokens: [t] }])),
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab },
  };
}

async function download(url: string, expectedSha256: string): Promise<Uint8Array> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== expectedSha256) {
    throw new Error(`${url} does not match its pin: SHA-256 ${actual}, expected ${expectedSha256}. Nothing was installed.`);
  }
  return bytes;
}

async function fetchModel(model: PinnedModel, modelsDir: string): Promise<void> {
  const target = join(modelsDir, model.name);
  const stamp = `${model.repo}@${model.revision}`;
  if (existsSync(join(target, ".pinned")) && readFileSync(join(target, ".pinned"), "utf8") === stamp) {
    console.log(`${model.name}: already installed (${stamp})`);
    return;
  }
  const staging = `${target}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  for (const file of model.files) {
    const url = `https://huggingface.co/${model.repo}/resolve/${model.revision}/${file.source}`;
    console.log(`${model.name}: ${file.source}`);
    const bytes = await download(url, file.sha256);
    mkdirSync(dirname(join(staging, file.target)), { recursive: true });
    writeFileSync(join(staging, file.target), bytes);
  }
  if (model.wordPieceFromVocab) {
    const vocab = readFileSync(join(staging, "vocab.txt"), "utf8");
    writeFileSync(join(staging, "tokenizer.json"), JSON.stringify(wordPieceTokenizer(vocab)));
  }
  writeFileSync(join(staging, "quarry.json"), JSON.stringify(model.quarry, null, 2));
  writeFileSync(join(staging, ".pinned"), stamp);
  rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  console.log(`${model.name}: installed in ${target}`);
}

const dirFlag = process.argv.indexOf("--dir");
const modelsDir = resolve(dirFlag > 0 ? process.argv[dirFlag + 1] : join(import.meta.dir, "..", "models"));
for (const model of MODELS) await fetchModel(model, modelsDir);
console.log(`\nUse them with: QUARRY_EMBED_MODEL=bge-small-en-v1.5 QUARRY_RERANK_MODEL=ms-marco-MiniLM-L-6-v2 QUARRY_MODELS_DIR=${modelsDir}`);
console.log("Switching the embedder of an existing store needs `quarry reindex` once.");
