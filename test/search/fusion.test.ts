// Hybrid fusion (src/search/fusion.ts): every chunk of either ranking scored by weighted RRF (scores.ts), those
// above 0 ordered by score then lower rowid, the first `limit` returned; checked against sorting them all.
// Also: the search threads' packed hits (rowid-hit.ts packHits) come back unchanged.
import { expect, test } from "bun:test";
import { fuseRankings } from "../../src/search/fusion.ts";
import { hybridScore } from "../../src/search/scores.ts";
import { packHits, unpackHits, type RowidHit } from "../../src/search/rowid-hit.ts";
import { uniform } from "../../scripts/seeded-random.ts";

function byDefinition(vector: RowidHit[], keyword: RowidHit[], alpha: number, limit: number): RowidHit[] {
  const rowids = [...new Set([...vector, ...keyword].map((hit) => hit.rowid))];
  // Equal raw scores share the best of their ranks: the rank of the first hit with that score.
  const rank = (hits: RowidHit[], rowid: number) => {
    const i = hits.findIndex((hit) => hit.rowid === rowid);
    return i < 0 ? null : hits.findIndex((hit) => hit.score === hits[i].score) + 1;
  };
  return rowids
    .map((rowid) => ({ rowid, score: hybridScore(rank(vector, rowid), rank(keyword, rowid), alpha) }))
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score || a.rowid - b.rowid)
    .slice(0, limit);
}

test("fusion keeps the best chunks of both rankings in order, equal side scores sharing a rank, ties to the lower rowid, for any weight and limit", () => {
  const random = uniform(5);
  const ranking = (length: number, pool: number, c: number) => {
    const rowids = new Set<number>();
    while (rowids.size < length) rowids.add(Math.floor(random() * pool));
    // Runs of equal scores, as a side gives copies of one text.
    return [...rowids].map((rowid, i) => ({ rowid, score: 1 - Math.floor(i / (1 + (c % 3))) / 1000 }));
  };
  for (let c = 0; c < 300; c++) {
    // Small pools make chunks found by both sides common; equal ranks on opposite sides tie at alpha 0.5.
    const vector = ranking(c % 9 === 0 ? 0 : 100, 400, c);
    const keyword = ranking(c % 13 === 0 ? 0 : Math.floor(random() * 101), 400, c + 1);
    const alpha = [0, 0.3, 0.5, 0.6, 1][c % 5];
    const limit = [1, 10, 50, 200, 300][Math.floor(c / 5) % 5];
    expect(fuseRankings(vector, keyword, alpha, limit)).toEqual(byDefinition(vector, keyword, alpha, limit));
  }
  // First on both sides scores exactly 1; a side weighted 0 contributes nothing, so its chunks alone are left out.
  const both = [{ rowid: 7, score: 1 }];
  expect(fuseRankings(both, both, 0.6, 10)).toEqual([{ rowid: 7, score: 1 }]);
  expect(fuseRankings([{ rowid: 1, score: 1 }], [{ rowid: 2, score: 9 }], 1, 10)).toEqual([{ rowid: 1, score: 1 }]);
  // Three copies of one text: equal on both sides, so equal fused scores (they were 1, 0.984 and 0.968).
  const copies = [3, 5, 9].map((rowid) => ({ rowid, score: 0.62 }));
  expect(fuseRankings(copies, copies, 0.6, 10)).toEqual([3, 5, 9].map((rowid) => ({ rowid, score: 1 })));
});

test("hits packed for a message between threads unpack to the same rowids and scores, in order", () => {
  const hits: RowidHit[] = [
    { rowid: 2 ** 31 - 1, score: 0.1 + 0.2 },
    { rowid: 7, score: -1.5e-300 },
    { rowid: 0, score: 12.345678901234567 },
  ];
  expect(unpackHits(packHits(hits))).toEqual(hits);
  expect(unpackHits(packHits([]))).toEqual([]);
});
