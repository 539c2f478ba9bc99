// The keyword side of search: BM25 over an on-disk segment (built off the HTTP thread, memory-mapped)
// plus an in-memory index of the chunks added since, scored with shared statistics.
export { BM25_B, BM25_K1, queryTermWeights, type KeywordHit, type KeywordStats } from "./bm25.ts";
export { KeywordIndex } from "./memory-index.ts";
export { KeywordSegment } from "./segment.ts";
export { writeKeywordSegment, type SegmentChunk, type WrittenSegment } from "./segment-writer.ts";
