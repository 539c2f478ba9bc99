// A hybrid search's sides are offered to every search thread and run by the first free one (task-claims.ts):
// each offered task is taken by exactly one thread, and a search answers as it would with its sides sent
// to fixed threads. Checked on real segments and real search threads.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCollection } from "../../scripts/bench/eval-collections.ts";
import { KeywordSegment, queryTermWeights, writeKeywordSegment } from "../../src/search/keyword/index.ts";
import type { RowidHit } from "../../src/search/rowid-hit.ts";
import { SegmentSearcher } from "../../src/search/segment-searcher.ts";
import type { KeywordQuery } from "../../src/search/search-thread-protocol.ts";
import { TaskClaims, takeClaim } from "../../src/search/task-claims.ts";
import { writeVectorSegment } from "../../src/search/vector/segment-writer.ts";
import { unitVectors } from "./vector-segment-data.ts";

const DIMENSION = 512;
const root = mkdtempSync(join(tmpdir(), "quarry-task-claims-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("a claim is taken once; a claim whose slot a later task took is taken by no one", () => {
  const claims = new TaskClaims();
  const first = claims.next();
  expect(takeClaim(claims.slots, first)).toBe(true);
  expect(takeClaim(claims.slots, first)).toBe(false);
  const stale = claims.next();
  let reuser = claims.next();
  while (reuser.slot !== stale.slot) reuser = claims.next();
  expect(reuser.ticket).not.toBe(stale.ticket);
  expect(takeClaim(claims.slots, stale)).toBe(false);
  expect(takeClaim(claims.slots, reuser)).toBe(true);
});

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

test("hybrid sides offered to every thread, 200 at once, answer as the same sides sent to fixed threads one at a time", async () => {
  const searcher = new SegmentSearcher(root, DIMENSION);
  searcher.start();
  try {
    searcher.open(vectorDir);
    searcher.open(keywordDir);
    // A search of one side alone runs one task on each thread, none offered: the reference.
    const expected: { vector: RowidHit[]; keyword: RowidHit[] }[] = [];
    for (const query of queries) {
      expected.push({
        vector: await searcher.vector(vectorDir, query.vector, null, texts.length, 100),
        keyword: await searcher.keyword(keywordDir, keywordQuery(query.text), null, 100),
      });
    }
    expect(expected.every((sides) => sides.vector.length === 100 && sides.keyword.length > 0)).toBe(true);
    const offered = Array.from({ length: 5 }, () =>
      queries.map((query) =>
        Promise.all([searcher.vector(vectorDir, query.vector, null, texts.length, 100, true), searcher.keyword(keywordDir, keywordQuery(query.text), null, 100, true)]),
      ),
    ).flat();
    const answers = await Promise.all(offered);
    answers.forEach(([vector, keyword], i) => {
      expect(vector).toEqual(expected[i % queries.length].vector);
      expect(keyword.map((hit) => hit.rowid)).toEqual(expected[i % queries.length].keyword.map((hit) => hit.rowid));
      keyword.forEach((hit, h) => expect(hit.score).toBeCloseTo(expected[i % queries.length].keyword[h].score, 9));
    });
  } finally {
    searcher.stop();
  }
});
