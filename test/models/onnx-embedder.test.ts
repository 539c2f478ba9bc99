import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OnnxEmbedder } from "../../src/models/onnx-embedder.ts";
import { defaultPrefixes } from "../../src/models/embedder-config.ts";
import { expectClose, maxDifference, modelDir, readWeights, referenceEmbedding, referenceTokenIds } from "./tiny-reference.ts";

const weights = readWeights("tiny-encoder");
const SHORT = "The quick brown fox.";
const MEDIUM = "Boundary layer flow over a flat plate!";
// 20+ content tokens: longer than the model's 14 (max_seq_length 16 minus [CLS] and [SEP]).
const LONG = "information retrieval systems rank documents by relevance to a query, and the results are shown to the people who search";
const UNUSUAL = "Zany gliders";

const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe("OnnxEmbedder, mean pooling (tiny-encoder)", () => {
  let embedder: OnnxEmbedder;
  beforeAll(async () => {
    embedder = await OnnxEmbedder.load(modelDir("tiny-encoder"), { threads: 1 });
  });
  afterAll(() => embedder.close());

  test("reads id, dimension and max tokens from the folder", () => {
    expect(embedder.id).toBe("tiny-encoder");
    expect(embedder.dimension).toBe(32);
    expect(embedder.maxTokens).toBe(14);
  });

  test("matches the reference forward pass and returns unit vectors", async () => {
    const texts = [SHORT, MEDIUM, UNUSUAL];
    const { vectors, tokenCounts } = await embedder.embed(texts, "passage");
    texts.forEach((text, i) => {
      const ids = referenceTokenIds(text);
      expect(tokenCounts[i]).toBe(ids.length);
      expectClose(vectors[i], referenceEmbedding(weights, ids, "mean"));
      expect(norm(vectors[i])).toBeCloseTo(1, 5);
    });
  });

  test("a short text padded in a batch with a long one gives the same vector as alone", async () => {
    const alone = (await embedder.embed([SHORT], "passage")).vectors[0];
    const batched = (await embedder.embed([SHORT, LONG], "passage")).vectors[0];
    expect(maxDifference(alone, batched)).toBeLessThan(1e-5);
  });

  test("truncates to the model's max length; countTokens does not", async () => {
    const ids = referenceTokenIds(LONG);
    expect(ids.length).toBeGreaterThan(14);
    expect(embedder.countTokens(LONG)).toBe(ids.length);
    const { vectors, tokenCounts } = await embedder.embed([LONG], "passage");
    expect(tokenCounts[0]).toBe(14);
    expectClose(vectors[0], referenceEmbedding(weights, ids.slice(0, 14), "mean"));
  });

  test("returns results in input order across length-sorted batches", async () => {
    const texts = [LONG, SHORT, UNUSUAL, MEDIUM, "fox", LONG.slice(0, 40), "blood cells"];
    const small = await OnnxEmbedder.load(modelDir("tiny-encoder"), { batchSize: 2, threads: 1 });
    try {
      const { vectors, tokenCounts } = await small.embed(texts, "query");
      texts.forEach((text, i) => {
        const ids = referenceTokenIds(text).slice(0, 14);
        expect(tokenCounts[i]).toBe(ids.length);
        expectClose(vectors[i], referenceEmbedding(weights, ids, "mean"));
      });
    } finally {
      await small.close();
    }
  });

  test("handles no texts and empty texts", async () => {
    expect(await embedder.embed([], "passage")).toEqual({ vectors: [], tokenCounts: [] });
    const { vectors, tokenCounts } = await embedder.embed([""], "passage");
    expect(tokenCounts).toEqual([0]);
    expectClose(vectors[0], referenceEmbedding(weights, [], "mean"));
  });
});

describe("OnnxEmbedder, other layouts", () => {
  test("CLS pooling (tiny-encoder-cls) takes the first token's vector", async () => {
    const embedder = await OnnxEmbedder.load(modelDir("tiny-encoder-cls"), { threads: 1 });
    try {
      const { vectors } = await embedder.embed([MEDIUM, SHORT], "passage");
      const ids = referenceTokenIds(MEDIUM);
      expectClose(vectors[0], referenceEmbedding(weights, ids, "cls"));
      expect(maxDifference(vectors[0], referenceEmbedding(weights, ids, "mean"))).toBeGreaterThan(0.01);
    } finally {
      await embedder.close();
    }
  });

  test("a graph that outputs sentence_embedding (no token_type_ids input) is fed and normalized", async () => {
    const embedder = await OnnxEmbedder.load(modelDir("tiny-sentence-encoder"), { threads: 1 });
    try {
      expect(embedder.dimension).toBe(32);
      const texts = [SHORT, LONG, MEDIUM];
      const { vectors } = await embedder.embed(texts, "passage");
      texts.forEach((text, i) => {
        expect(norm(vectors[i])).toBeCloseTo(1, 5);
        expectClose(vectors[i], referenceEmbedding(weights, referenceTokenIds(text).slice(0, 14), "mean"));
      });
    } finally {
      await embedder.close();
    }
  });
});

describe("query and passage prefixes", () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "quarry-prefix-"));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  function copyAs(name: string, quarryJson?: object): string {
    const dir = join(root, name);
    cpSync(modelDir("tiny-encoder"), dir, { recursive: true });
    if (quarryJson) writeFileSync(join(dir, "quarry.json"), JSON.stringify(quarryJson));
    return dir;
  }

  test("known defaults by model name", () => {
    expect(defaultPrefixes("multilingual-e5-small")).toEqual({ queryPrefix: "query: ", passagePrefix: "passage: " });
    expect(defaultPrefixes("e5-base-v2")).toEqual({ queryPrefix: "query: ", passagePrefix: "passage: " });
    expect(defaultPrefixes("bge-small-en-v1.5")).toEqual({
      queryPrefix: "Represent this sentence for searching relevant passages: ",
      passagePrefix: "",
    });
    for (const plain of ["all-MiniLM-L6-v2", "gte-small", "use-lite", "tiny-encoder"]) {
      expect(defaultPrefixes(plain)).toEqual({ queryPrefix: "", passagePrefix: "" });
    }
  });

  test("an e5-named model embeds 'query: ' / 'passage: ' + text and counts the passage prefix", async () => {
    const embedder = await OnnxEmbedder.load(copyAs("e5-tiny"), { threads: 1 });
    try {
      expect(embedder.id).toBe("e5-tiny");
      const text = "blood cells";
      expect(embedder.countTokens(text)).toBe(referenceTokenIds(text).length + 2); // "passage", ":"
      const query = (await embedder.embed([text], "query")).vectors[0];
      const passage = (await embedder.embed([text], "passage")).vectors[0];
      expectClose(query, referenceEmbedding(weights, referenceTokenIds(`query: ${text}`), "mean"));
      expectClose(passage, referenceEmbedding(weights, referenceTokenIds(`passage: ${text}`), "mean"));
      expect(maxDifference(query, passage)).toBeGreaterThan(0.01);
    } finally {
      await embedder.close();
    }
  });

  test("quarry.json overrides the id and the prefixes", async () => {
    const embedder = await OnnxEmbedder.load(copyAs("custom", { id: "my-e5", queryPrefix: "search: ", passagePrefix: "" }), { threads: 1 });
    try {
      expect(embedder.id).toBe("my-e5");
      expect(embedder.countTokens("blood cells")).toBe(2);
      const query = (await embedder.embed(["blood cells"], "query")).vectors[0];
      expectClose(query, referenceEmbedding(weights, referenceTokenIds("search: blood cells"), "mean"));
    } finally {
      await embedder.close();
    }
  });
});
