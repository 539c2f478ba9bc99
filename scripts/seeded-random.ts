// One seeded uniform random source (mulberry32) for the fixtures, tests, benchmarks and fuzzer: the same
// seed gives the same sequence. Integer arithmetic throughout: the float LCG `(s * 1103515245 + 12345) %
// 2 ** 31` it replaces loses bits past 2^53 and repeats after ~11,000 draws (bench:scale's million chunks
// had 11,098 distinct texts).

/** A deterministic uniform generator in [0, 1). */
export function uniform(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
