// The formats of a segment's parts move with the segment's. Recovery (index-recovery.ts) rebuilds a
// segment whose manifest holds an older SEGMENT_FORMAT; a vector or keyword file of an older format behind
// a current manifest is never rebuilt, and every search of its knowledge base fails. So a change of either
// part's format bumps SEGMENT_FORMAT too, and this pin with it.
import { expect, test } from "bun:test";
import { SEGMENT_FORMAT } from "../../src/search/segment-files.ts";
import { VERSION as KEYWORD_VERSION } from "../../src/search/keyword/segment-format.ts";
import { FORMAT as VECTOR_FORMAT } from "../../src/search/vector/segment-files.ts";

test("the vector and keyword file formats are those SEGMENT_FORMAT was last bumped with", () => {
  expect({ segment: SEGMENT_FORMAT, vector: VECTOR_FORMAT, keyword: KEYWORD_VERSION }).toEqual({ segment: 8, vector: 5, keyword: 2 });
});
