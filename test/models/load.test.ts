import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILT_IN_MODELS_DIR, loadModels } from "../../src/models/load.ts";
import { MODELS_DIR, modelDir } from "./tiny-reference.ts";

let modelsDir: string;
beforeAll(() => {
  modelsDir = mkdtempSync(join(tmpdir(), "quarry-load-"));
});
afterAll(() => rmSync(modelsDir, { recursive: true, force: true }));

/** Copies a generated model into the temp models dir under `name`, then lets the test break it. */
function install(source: string, name: string, edit?: (dir: string) => void): string {
  const dir = join(modelsDir, name);
  rmSync(dir, { recursive: true, force: true });
  cpSync(modelDir(source), dir, { recursive: true });
  edit?.(dir);
  return name;
}

async function loadError(embedModel: string, rerankModel: string | null = null): Promise<string> {
  try {
    const models = await loadModels({ modelsDir, embedModel, rerankModel, threads: 1 });
    await models.embedder.close();
    await models.reranker?.close();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected loadModels to fail");
}

describe("loadModels", () => {
  test("loads an embedder and a reranker and describes them", async () => {
    const models = await loadModels({ modelsDir: MODELS_DIR, embedModel: "tiny-encoder", rerankModel: "tiny-reranker", threads: 1 });
    try {
      expect(models.description).toEqual({
        embedding: { id: "tiny-encoder", dimension: 32, max_tokens: 14 },
        reranker: { id: "tiny-reranker" },
        reranking_hint: null,
      });
      expect((await models.embedder.embed(["fox"], "query")).vectors[0]).toHaveLength(32);
      expect(await models.reranker!.score("fox", ["the quick brown fox"])).toHaveLength(1);
    } finally {
      await models.embedder.close();
      await models.reranker?.close();
    }
  });

  test("without a rerank model there is no reranker, and the description says how to add one", async () => {
    const models = await loadModels({ modelsDir: MODELS_DIR, embedModel: "tiny-encoder", rerankModel: null });
    try {
      expect(models.reranker).toBeNull();
      expect(models.description.reranker).toBeNull();
      expect(models.description.reranking_hint).toBe(
        `Reranking is unavailable: copy a cross-encoder (e.g. ms-marco-MiniLM-L-6-v2 ONNX export) into <models dir>/<name> (QUARRY_MODELS_DIR) and set QUARRY_RERANK_MODEL=<name>`,
      );
    } finally {
      await models.embedder.close();
    }
  });

  test("a folder in modelsDir wins over the built-in models folder", async () => {
    const name = `quarry-test-builtin-${process.pid}`;
    const builtIn = join(BUILT_IN_MODELS_DIR, name);
    cpSync(modelDir("tiny-encoder"), builtIn, { recursive: true });
    writeFileSync(join(builtIn, "quarry.json"), JSON.stringify({ id: "from-built-in" }));
    try {
      const fromBuiltIn = await loadModels({ modelsDir, embedModel: name });
      expect(fromBuiltIn.embedder.id).toBe("from-built-in");
      await fromBuiltIn.embedder.close();
      install("tiny-encoder", name, (dir) => writeFileSync(join(dir, "quarry.json"), JSON.stringify({ id: "from-models-dir" })));
      const fromModelsDir = await loadModels({ modelsDir, embedModel: name });
      expect(fromModelsDir.embedder.id).toBe("from-models-dir");
      await fromModelsDir.embedder.close();
    } finally {
      rmSync(builtIn, { recursive: true, force: true });
    }
  });
});

describe("loadModels errors say what is missing and how to install a model", () => {
  const installHint = "copy its Hugging Face folder";

  test("unknown model name", async () => {
    const message = await loadError("no-such-model");
    expect(message).toContain('Embedding model "no-such-model" not found');
    expect(message).toContain(join(modelsDir, "no-such-model"));
    expect(message).toContain(join(BUILT_IN_MODELS_DIR, "no-such-model"));
    expect(message).toContain(installHint);
  });

  test("unknown rerank model", async () => {
    const message = await loadError(install("tiny-encoder", "enc"), "no-such-reranker");
    expect(message).toContain('Reranking model "no-such-reranker" not found');
    expect(message).toContain(installHint);
  });

  const broken: [string, (dir: string) => void, string][] = [
    ["no ONNX file", (dir) => rmSync(join(dir, "onnx"), { recursive: true }), "is missing onnx/model.onnx (or model.onnx)"],
    ["no tokenizer.json", (dir) => rmSync(join(dir, "tokenizer.json")), "is missing tokenizer.json"],
    ["no pooling config", (dir) => rmSync(join(dir, "1_Pooling"), { recursive: true }), "is missing 1_Pooling/config.json"],
    [
      "no max length anywhere",
      (dir) => ["config.json", "sentence_bert_config.json"].forEach((f) => rmSync(join(dir, f))),
      "is missing config.json (or sentence_bert_config.json)",
    ],
    [
      "a config.json without the max length",
      (dir) => {
        rmSync(join(dir, "sentence_bert_config.json"));
        writeFileSync(join(dir, "config.json"), "{}");
      },
      "has no max_position_embeddings in config.json (nor max_seq_length in sentence_bert_config.json): cannot tell the model's maximum sequence length",
    ],
    ["invalid JSON", (dir) => writeFileSync(join(dir, "config.json"), "{"), "has an unreadable config.json"],
    ["corrupt ONNX file", (dir) => writeFileSync(join(dir, "onnx/model.onnx"), "not a model"), "Cannot load ONNX model"],
    [
      "dimension mismatch",
      (dir) => writeFileSync(join(dir, "quarry.json"), JSON.stringify({ dimension: 384 })),
      "declares dimension 384 but the model outputs 32",
    ],
  ];
  for (const [what, breakIt, expected] of broken) {
    test(`embedding model folder with ${what}`, async () => {
      const message = await loadError(install("tiny-encoder", "broken", breakIt));
      expect(message).toContain('Embedding model "broken" cannot be loaded');
      expect(message).toContain(expected);
      expect(message).toContain(installHint);
    });
  }

  test("an embedding model configured as the reranker", async () => {
    const message = await loadError(install("tiny-encoder", "enc"), install("tiny-encoder", "not-a-reranker"));
    expect(message).toContain('Reranking model "not-a-reranker" cannot be loaded');
    expect(message).toContain("is not a cross-encoder");
  });
});
