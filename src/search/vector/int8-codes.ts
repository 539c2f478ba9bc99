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
  // Four running sums: about twice as fast as one (measured with 512-d codes under Bun).
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  const whole = query.length & ~3;
  let i = 0;
  for (; i < whole; i += 4) {
    a += query[i] * codes[offset + i];
    b += query[i + 1] * codes[offset + i + 1];
    c += query[i + 2] * codes[offset + i + 2];
    d += query[i + 3] * codes[offset + i + 3];
  }
  for (; i < query.length; i++) a += query[i] * codes[offset + i];
  return (a + b + c + d) * scale;
}
