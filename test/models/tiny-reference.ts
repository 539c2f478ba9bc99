// An independent re-implementation of the generated tiny models (scripts/gen-test-models.ts) in plain
// TypeScript, in double precision, one unpadded sequence at a time: tokenizer, forward pass, pooling, heads.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generateTestModels, type EncoderWeights } from "../../scripts/gen-test-models.ts";

export const MODELS_DIR = generateTestModels();

export function modelDir(name: string): string {
  return join(MODELS_DIR, name);
}

export function readWeights(name: string): EncoderWeights {
  return JSON.parse(readFileSync(join(modelDir(name), "weights.json"), "utf8"));
}

const vocab: Record<string, number> = JSON.parse(readFileSync(join(modelDir("tiny-encoder"), "tokenizer.json"), "utf8")).model.vocab;
export const CLS = vocab["[CLS]"];
export const SEP = vocab["[SEP]"];
const UNK = vocab["[UNK]"];

/** BERT basic tokenization (lowercase, split on spaces and punctuation) + greedy longest-match WordPiece. */
export function referenceTokenIds(text: string): number[] {
  const ids: number[] = [];
  for (const word of text.toLowerCase().match(/[a-z0-9]+|[^\sa-z0-9]/g) ?? []) {
    const pieces: number[] = [];
    let start = 0;
    while (start < word.length) {
      let end = word.length;
      let id: number | undefined;
      for (; end > start; end--) {
        id = vocab[(start > 0 ? "##" : "") + word.slice(start, end)];
        if (id !== undefined) break;
      }
      if (id === undefined) {
        pieces.length = 0;
        pieces.push(UNK);
        break;
      }
      pieces.push(id);
      start = end;
    }
    ids.push(...pieces);
  }
  return ids;
}

const matVec = (x: number[], m: number[][], bias: number[]) =>
  bias.map((b, j) => x.reduce((sum, xi, i) => sum + xi * m[i][j], b));

/** Hidden states [seq][hidden] for one sequence with no padding. */
export function encoderForward(w: EncoderWeights, ids: number[], typeIds: number[] = ids.map(() => 0)): number[][] {
  const h0 = ids.map((id, t) => w.word[id].map((v, d) => v + w.position[t][d] + w.tokenType[typeIds[t]][d]));
  const q = h0.map((x) => matVec(x, w.query, w.queryBias));
  const k = h0.map((x) => matVec(x, w.key, w.keyBias));
  const v = h0.map((x) => matVec(x, w.value, w.valueBias));
  const scale = 1 / Math.sqrt(h0[0].length);
  return h0.map((x, t) => {
    const scores = k.map((kj) => kj.reduce((s, kv, d) => s + kv * q[t][d], 0) * scale);
    const max = Math.max(...scores);
    const exps = scores.map((s) => Math.exp(s - max));
    const total = exps.reduce((a, b) => a + b, 0);
    const context = x.map((_, d) => exps.reduce((s, e, j) => s + (e / total) * v[j][d], 0));
    return matVec(x.map((xd, d) => xd + context[d]), w.dense, w.denseBias).map(Math.tanh);
  });
}

export function normalize(v: number[]): number[] {
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / norm);
}

/** The embedding the tiny encoders should give: [CLS] text-tokens [SEP], pooled, normalized. */
export function referenceEmbedding(w: EncoderWeights, contentIds: number[], pooling: "mean" | "cls"): number[] {
  const hidden = encoderForward(w, [CLS, ...contentIds, SEP]);
  if (pooling === "cls") return normalize(hidden[0]);
  const mean = hidden[0].map((_, d) => hidden.reduce((s, h) => s + h[d], 0) / hidden.length);
  return normalize(mean);
}

/** Cross-encoder logits for [CLS] query [SEP] passage [SEP] with segment ids 0 / 1 (or all 0 if asked). */
export function referenceLogits(w: EncoderWeights, query: number[], passage: number[], segments = true): number[] {
  const ids = [CLS, ...query, SEP, ...passage, SEP];
  const typeIds = ids.map((_, i) => (segments && i > query.length + 1 ? 1 : 0));
  const cls = encoderForward(w, ids, typeIds)[0];
  return matVec(cls, w.classifier!, w.classifierBias!);
}

export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance = 1e-4): void {
  if (actual.length !== expected.length) throw new Error(`length ${actual.length} != ${expected.length}`);
  for (let i = 0; i < actual.length; i++) {
    if (!(Math.abs(actual[i] - expected[i]) <= tolerance)) {
      throw new Error(`element ${i}: ${actual[i]} differs from ${expected[i]} by more than ${tolerance}`);
    }
  }
}

export function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}
