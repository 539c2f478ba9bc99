// The search threads take up tasks as they get free, the oldest search's first (segment-searcher.ts,
// search-order.ts): searches answer as they do one at a time (then split across the idle threads; at once,
// most are one task each: splitWays), and a side sent late (a hybrid search's vector side, after its
// embedding) goes ahead of newer searches' waiting tasks. Checked on real segments and real search threads.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCollection } from "../../scripts/bench/eval-collections.ts";
import { KeywordSegment, queryTermWeights, writeKeywordSegment } from "../../src/search/keyword/index.ts";
import type { RowidHit } from "../../src/search/rowid-hit.ts";
import { SegmentSearcher } from "../../src/search/segment-searcher.ts";
import type { KeywordQuery } from "../../src/search/search-thread-protocol.ts";
import { nextSearch } from "../../src/search/search-order.ts";
import { writeVectorSegment } from "../../src/search/vector/segment-writer.ts";
import { unitVectors } from "./vector-segment-data.ts";

const DIMENSION = 512;
const root = mkdtempSync(join(tmpdir(), "quarry-task-claims-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const texts = loadCollection("cran").corpus.map((doc) => doc.text);
const vectors = unitVectors(texts.length + 20, DIMENSION, 1, 40);
const vectorDir = join(root, "vector");
const keywordDir = join(root, "keyword");
writeVectorSegment(vectorDir, texts.map((_, i) => ({ rowid: i + 1, vector: vectors[i] })), DIMENSION, undefined, { lists: 16 });
writeKeywordSegment(keywordDir, texts.map((text, i) => ({ rowid: i + 1, text })));
const keywordSegment = KeywordSegment.open(keywordDir);
const queries = loadCollection("cran").queries.slice(0, 20).map((query, i) => ({ text: query.text, vector: vectors[texts.length + i] }));

function keywordQuery(text: string): KeywordQuery {
  const terms = [...queryTermWeights(text)];
  return {
    terms,
    chunkCount: keywordSegment.chunkCount,
    averageLength: keywordSegment.totalLength / keywordSegment.chunkCount,
    documentFrequencies: terms.map(([term]) => [term, keywordSegment.documentFrequency(term)]),
    eligibleShare: 1,
  };
}

/** Runs `use` on real search threads with both segments open, and stops them. */
async function withSearcher(use: (searcher: SegmentSearcher) => Promise<void>): Promise<void> {
  const searcher = new SegmentSearcher(root);
  searcher.start();
  try {
    searcher.open(vectorDir);
    searcher.open(keywordDir);
    await use(searcher);
  } finally {
    searcher.stop();
  }
}

test("200 hybrid and single-mode searches at once answer as the same searches one at a time", async () => {
  await withSearcher(async (searcher) => {
    const expected: { vector: RowidHit[]; keyword: RowidHit[] }[] = [];
    for (const query of queries) {
      expected.push({
        vector: await searcher.vector(vectorDir, query.vector, null, texts.length, 100),
        keyword: await searcher.keyword(keywordDir, keywordQuery(query.text), null, 100),
      });
    }
    expect(expected.every((sides) => sides.vector.length === 100 && sides.keyword.length > 0)).toBe(true);
    const concurrent = Array.from({ length: 5 }, (_, round) =>
      queries.map((query) => {
        const side = nextSearch(round % 2 === 0);
        return Promise.all([searcher.vector(vectorDir, query.vector, null, texts.length, 100, side), searcher.keyword(keywordDir, keywordQuery(query.text), null, 100, side)]);
      }),
    ).flat();
    const answers = await Promise.all(concurrent);
    answers.forEach(([vector, keyword], i) => {
      const { vector: expectedVector, keyword: expectedKeyword } = expected[i % queries.length];
      expect(vector).toEqual(expectedVector);
      expect(keyword.map((hit) => hit.rowid)).toEqual(expectedKeyword.map((hit) => hit.rowid));
      keyword.forEach((hit, h) => expect(hit.score).toBeCloseTo(expectedKeyword[h].score, 9));
    });
  });
});

test("a side of an older search goes ahead of newer searches' waiting tasks", async () => {
  await withSearcher(async (searcher) => {
    // Every thread's first vector task opens the segment and compiles its code: out of the way first, so
    // that the older search's task takes as long as any (up to 41 of the 60 newer searches finished first).
    await searcher.vector(vectorDir, queries[1].vector, null, texts.length, 100);
    const older = nextSearch(true);
    const finished: string[] = [];
    const newer = Array.from({ length: 60 }, (_, i) =>
      searcher.keyword(keywordDir, keywordQuery(queries[i % queries.length].text), null, 100).then(() => finished.push(`newer ${i}`)),
    );
    // Sent after the 60 newer searches' tasks, as a hybrid search's vector side is sent after its embedding.
    const late = searcher.vector(vectorDir, queries[0].vector, null, texts.length, 100, older).then(() => finished.push("older"));
    await Promise.all([...newer, late]);
    // Each thread holds at most two tasks: only those sent before it can finish first, and the threads
    // run every newer search's shards, so well over half of them finish after it.
    expect(finished.indexOf("older")).toBeLessThan(30);
  });
});
