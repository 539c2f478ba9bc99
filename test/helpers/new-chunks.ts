// Chunks ready to store, with 4-d vectors whose first value marks which batch they came from.
import type { NewChunk } from "../../src/store/chunks.ts";

export function newChunks(count: number, mark: number): NewChunk[] {
  return Array.from({ length: count }, (_, i) => ({
    text: `chunk ${i}`,
    chunkIndex: i,
    startPage: null,
    endPage: 1,
    sectionHeading: "",
    tokenCount: 2,
    metadata: {},
    embedding: new Float32Array([mark, i, 0, 0]),
  }));
}
