// The ONNX conversion of USE-Lite (models/use-lite) against the TF.js reference runtime.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defaultModelDir, prepareDefaultModel } from "../../scripts/prepare-default-model.ts";
import { cosine, loadOnnxUseLite, loadReferenceUseLite, type OnnxUseLite, type ReferenceUseLite } from "../../scripts/use-lite/parity/runtimes.ts";
import { PARITY_SENTENCES_SMALL } from "../../scripts/use-lite/parity/sentences.ts";

let reference: ReferenceUseLite;
let onnx: OnnxUseLite;

beforeAll(async () => {
  await prepareDefaultModel();
  reference = await loadReferenceUseLite();
  onnx = await loadOnnxUseLite(defaultModelDir);
});
afterAll(() => onnx?.close());

const maxAbsDifference = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  Array.from(a).reduce((max, value, i) => Math.max(max, Math.abs(value - b[i])), 0);

test("quarry.json tells the generic embedder to use the model output as is", () => {
  const quarry = JSON.parse(readFileSync(join(defaultModelDir, "quarry.json"), "utf8"));
  expect(quarry).toEqual({
    id: "use-lite",
    dimension: 512,
    maxTokens: 128,
    pooling: "none — output is the sentence embedding",
    output: "sentence_embedding",
    longInputs: "windows",
    queryPrefix: "",
    passagePrefix: "",
  });
});

test("tokenizer.json gives the reference token ids", () => {
  for (const text of PARITY_SENTENCES_SMALL) {
    expect({ text, ids: onnx.tokenize(text) }).toEqual({ text, ids: reference.tokenize(text) });
  }
});

test("ONNX embeddings match the TF.js reference (cosine ≥ 0.999)", async () => {
  const expected = await reference.embed(PARITY_SENTENCES_SMALL);
  const actual = await onnx.embed(PARITY_SENTENCES_SMALL);
  PARITY_SENTENCES_SMALL.forEach((text, i) => {
    expect({ text, cosine: cosine(expected[i], actual[i]) >= 0.999 }).toEqual({ text, cosine: true });
    expect(Math.hypot(...actual[i])).toBeCloseTo(1, 5); // already L2-normalized
  });
});

test("a text embeds the same alone and inside a padded batch of mixed lengths", async () => {
  const texts = PARITY_SENTENCES_SMALL.slice(0, 8).concat(PARITY_SENTENCES_SMALL.at(-1)!);
  const batched = await onnx.embed(texts);
  for (const [i, text] of texts.entries()) {
    const [alone] = await onnx.embed([text]);
    // Equal up to float rounding: padding changes the length of some internal sums.
    expect(maxAbsDifference(alone, batched[i])).toBeLessThan(1e-6);
  }
});

test("the model reads only the first maxTokens tokens, like the reference", async () => {
  const ids = onnx.tokenize(PARITY_SENTENCES_SMALL.at(-1)!);
  expect(ids.length).toBeGreaterThan(onnx.maxTokens);
  const [full, truncated] = await onnx.embedIds([ids, ids.slice(0, onnx.maxTokens)]);
  expect(maxAbsDifference(full, truncated)).toBeLessThan(1e-6);
});
