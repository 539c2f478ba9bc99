// Synthetic unit vectors for the vector segment's tests and benchmark: uniformly random ones (the worst
// case for a graph index) or clustered ones (as sentence embeddings of a corpus are), from a seed.
import { uniform } from "../../scripts/seeded-random.ts";

function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}

/**
 * `count` unit vectors, generated one at a time. With `clusters`, each is a random cluster centre plus
 * noise of about the centre's length (neighbours then have cosine ~0.5, as embeddings of related passages
 * do); without, uniform on the sphere (approximately).
 */
export function* unitVectorStream(count: number, dimension: number, seed: number, clusters?: number): Generator<Float32Array> {
  const random = uniform(seed);
  const centred = () => random() + random() + random() - 1.5;
  const noise = clusters ? 1 / Math.sqrt(dimension) : 1;
  const centres = Array.from({ length: clusters ?? 0 }, () => normalize(Float32Array.from({ length: dimension }, centred)));
  for (let n = 0; n < count; n++) {
    const centre = clusters ? centres[Math.floor(random() * clusters)] : null;
    yield normalize(Float32Array.from({ length: dimension }, (_, i) => (centre ? centre[i] : 0) + noise * 2 * centred()));
  }
}

export function unitVectors(count: number, dimension: number, seed: number, clusters?: number): Float32Array[] {
  return [...unitVectorStream(count, dimension, seed, clusters)];
}

/** Rowids of the exact top `k` by float cosine among `rowids[i]` ↔ `vectors[i]`, optionally only eligible ones. */
export function exactTop(vectors: Float32Array[], rowids: number[], query: Float32Array, k: number, eligible?: Uint8Array): number[] {
  const scored: { rowid: number; score: number }[] = [];
  vectors.forEach((vector, i) => {
    if (eligible && eligible[rowids[i]] !== 1) return;
    let dot = 0;
    for (let d = 0; d < vector.length; d++) dot += vector[d] * query[d];
    scored.push({ rowid: rowids[i], score: dot });
  });
  return scored
    .sort((a, b) => b.score - a.score)
    .slice(0, k)
    .map((hit) => hit.rowid);
}
