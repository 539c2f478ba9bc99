// When a single-mode search is split across the search threads (segment-searcher.ts splitWays): across
// every idle thread, and in one task once searches queue. That both answer alike is checked on real
// threads in search-order.test.ts.
import { expect, test } from "bun:test";
import { splitWays } from "../../src/search/segment-searcher.ts";

test("a search that finds every thread idle is split across all of them", () => {
  expect(splitWays(0, [0, 0])).toBe(2);
  expect(splitWays(0, [0, 0, 0, 0])).toBe(4);
});

test("a search that finds some threads busy is split across the idle ones only", () => {
  expect(splitWays(0, [1, 0])).toBe(1);
  expect(splitWays(0, [2, 0, 1, 0])).toBe(2);
});

test("a search that finds every thread busy, or tasks waiting, is one task", () => {
  expect(splitWays(0, [1, 2])).toBe(1);
  expect(splitWays(3, [0, 0])).toBe(1);
  expect(splitWays(1, [2, 2])).toBe(1);
});
