import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OnnxReranker } from "../../src/models/onnx-reranker.ts";
import { truncatePair } from "../../src/models/tokenize.ts";
import { modelDir, readWeights, referenceLogits, referenceTokenIds } from "./tiny-reference.ts";

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const QUERY = "blood cells";
const PASSAGES = [
  "The patients had normal levels of red blood cells.",
  "A wing in a slipstream.",
  "",
  // 40+ tokens: cut to the 21 - 2 = 19 passage tokens the window leaves after the query.
  "Information retrieval systems rank documents by relevance to a query and the results are shown to the people who search the library index for books and papers",
];

describe("OnnxReranker, one logit per pair (tiny-reranker)", () => {
  const weights = readWeights("tiny-reranker");
  let reranker: OnnxReranker;
  beforeAll(async () => {
    reranker = await OnnxReranker.load(modelDir("tiny-reranker"), { threads: 1, batchSize: 2 });
  });
  afterAll(() => reranker.close());

  test("scores are sigmoid(logit) of [CLS] query [SEP] passage [SEP] with segment ids, in passage order", async () => {
    const scores = await reranker.score(QUERY, PASSAGES);
    expect(reranker.id).toBe("tiny-reranker");
    const query = referenceTokenIds(QUERY);
    PASSAGES.forEach((passage, i) => {
      const passageIds = referenceTokenIds(passage).slice(0, 24 - 3 - query.length);
      const expected = sigmoid(referenceLogits(weights, query, passageIds)[0]);
      expect(scores[i]).toBeCloseTo(expected, 5);
      expect(scores[i]).toBeGreaterThanOrEqual(0);
      expect(scores[i]).toBeLessThanOrEqual(1);
      // The segment ids matter: the same pair without them scores differently.
      if (passage) expect(Math.abs(sigmoid(referenceLogits(weights, query, passageIds, false)[0]) - scores[i])).toBeGreaterThan(1e-4);
    });
  });

  test("no passages, no scores", async () => {
    expect(await reranker.score(QUERY, [])).toEqual([]);
  });
});

test("two logits per pair: the softmax probability of the last class (tiny-reranker-2logit)", async () => {
  const weights = readWeights("tiny-reranker-2logit");
  const reranker = await OnnxReranker.load(modelDir("tiny-reranker-2logit"), { threads: 1 });
  try {
    const scores = await reranker.score(QUERY, PASSAGES.slice(0, 2));
    PASSAGES.slice(0, 2).forEach((passage, i) => {
      const [a, b] = referenceLogits(weights, referenceTokenIds(QUERY), referenceTokenIds(passage));
      expect(scores[i]).toBeCloseTo(Math.exp(b) / (Math.exp(a) + Math.exp(b)), 5);
    });
  } finally {
    await reranker.close();
  }
});

describe("truncatePair", () => {
  const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);

  test("cuts only the passage while the query fits in half the window", () => {
    expect(truncatePair(ids(3), ids(40, 100), 21)).toEqual([ids(3), ids(18, 100)]);
    expect(truncatePair(ids(3), ids(5, 100), 21)).toEqual([ids(3), ids(5, 100)]);
  });

  test("a long query keeps half the window, or whatever a short passage leaves", () => {
    expect(truncatePair(ids(30), ids(40, 100), 21)).toEqual([ids(11), ids(10, 100)]);
    expect(truncatePair(ids(30), ids(2, 100), 21)).toEqual([ids(19), ids(2, 100)]);
  });
});
