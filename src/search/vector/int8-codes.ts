// The 8-bit form of a unit vector shared by the in-memory VectorIndex and the on-disk VectorSegment, so
// that both score a chunk identically: codes = round(v / scale) with scale = max |v_i| / 127 (one scale
// per vector; cosine within ~0.002 of the float value), score = (query · codes) × scale.

/** Writes the codes of `vector` at codes[offset...] and returns its scale. */
export function quantize(vector: Float32Array, codes: Int8Array, offset: number): number {
  let max = 0;
  for (let i = 0; i < vector.length; i++) max = Math.max(max, Math.abs(vector[i]));
  const scale = max / 127 || 1;
  for (let i = 0; i < vector.length; i++) codes[offset + i] = Math.round(vector[i] / scale);
  return scale;
}

/** Cosine similarity of a unit query and the vector whose codes start at codes[offset]. */
export function codeCosine(query: Float32Array, codes: Int8Array, offset: number, scale: number): number {
  let dot = 0;
  for (let i = 0; i < query.length; i++) dot += query[i] * codes[offset + i];
  return dot * scale;
}
