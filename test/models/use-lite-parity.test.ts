// The ONNX conversion of USE-Lite against the TF.js reference runtime: the float32 conversion (written to a
// temporary folder) must match it, and the int8 build that Quarry runs (models/use-lite) must stay close.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertUseLite } from "../../scripts/convert-use-lite.ts";
import { defaultModelDir, prepareDefaultModel } from "../../scripts/prepare-default-model.ts";
import { cosine, loadOnnxUseLite, loadReferenceUseLite, type OnnxUseLite, type ReferenceUseLite } from "../../scripts/use-lite/parity/runtimes.ts";
import { FLOAT32_MIN_COSINE, INT8_MIN_COSINE, PARITY_SENTENCES_SMALL } from "../../scripts/use-lite/parity/sentences.ts";

let reference: ReferenceUseLite;
let float32: OnnxUseLite;
let int8: OnnxUseLite;
const floatDir = mkdtempSync(join(tmpdir(), "use-lite-float32-"));

beforeAll(async () => {
  await prepareDefaultModel();
  convertUseLite(floatDir, "float32");
  reference = await loadReferenceUseLite();
  float32 = await loadOnnxUseLite(floatDir);
  int8 = await loadOnnxUseLite(defaultModelDir);
});
afterAll(async () => {
  await float32?.close();
  await int8?.close();
  rmSync(floatDir, { recursive: true, force: true });
});

const maxAbsDifference = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  Array.from(a).reduce((max, value, i) => Math.max(max, Math.abs(value - b[i])), 0);

test("quarry.json tells the generic embedder to use the model output as is, one text per run", () => {
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
    batchSize: 1,
    lowercaseAllCapsWords: true,
  });
});

test("tokenizer.json gives the reference token ids", () => {
  for (const text of PARITY_SENTENCES_SMALL) {
    expect({ text, ids: int8.tokenize(text) }).toEqual({ text, ids: reference.tokenize(text) });
  }
});

test(`the float32 conversion matches the TF.js reference (cosine ≥ ${FLOAT32_MIN_COSINE})`, async () => {
  const expected = await reference.embed(PARITY_SENTENCES_SMALL);
  const actual = await float32.embed(PARITY_SENTENCES_SMALL);
  PARITY_SENTENCES_SMALL.forEach((text, i) => {
    expect({ text, close: cosine(expected[i], actual[i]) >= FLOAT32_MIN_COSINE }).toEqual({ text, close: true });
    expect(Math.hypot(...actual[i])).toBeCloseTo(1, 5); // already L2-normalized
  });
});

test(`the int8 build Quarry runs stays close to the TF.js reference (cosine ≥ ${INT8_MIN_COSINE})`, async () => {
  const expected = await reference.embed(PARITY_SENTENCES_SMALL);
  const actual = await int8.embed(PARITY_SENTENCES_SMALL);
  PARITY_SENTENCES_SMALL.forEach((text, i) => {
    expect({ text, close: cosine(expected[i], actual[i]) >= INT8_MIN_COSINE }).toEqual({ text, close: true });
    expect(Math.hypot(...actual[i])).toBeCloseTo(1, 5);
  });
});

test("the float32 graph embeds a text the same alone and inside a padded batch of mixed lengths", async () => {
  const texts = PARITY_SENTENCES_SMALL.slice(0, 8).concat(PARITY_SENTENCES_SMALL.at(-1)!);
  const batched = await float32.embed(texts);
  for (const [i, text] of texts.entries()) {
    const [alone] = await float32.embed([text]);
    // Equal up to float rounding: padding changes the length of some internal sums.
    expect(maxAbsDifference(alone, batched[i])).toBeLessThan(1e-6);
  }
});

test("the model reads only the first maxTokens tokens, like the reference", async () => {
  for (const model of [float32, int8]) {
    const ids = model.tokenize(PARITY_SENTENCES_SMALL.at(-1)!);
    expect(ids.length).toBeGreaterThan(model.maxTokens);
    const [full, truncated] = await model.embedIds([ids, ids.slice(0, model.maxTokens)]);
    expect(maxAbsDifference(full, truncated)).toBeLessThan(1e-6);
  }
});
