// The 8-bit form of a unit vector shared by the in-memory VectorIndex and the on-disk VectorSegment, so
// that both score a chunk identically: codes = round(v / scale) with scale = max |v_i| / 127 (one scale
// per vector; cosine within ~0.002 of the float value). A query is scored in 16-bit form (queryCodes):
// score = (Σ query_i × code_i) × query scale × code scale, the sum in integers, so that it is exact
// however it is added up (the WebAssembly kernel adds eight products a step, code-scan.ts).

/** Writes the codes of `vector` at codes[offset...] and returns its scale. */
export function quantize(vector: Float32Array, codes: Int8Array, offset: number): number {
  let max = 0;
  for (let i = 0; i < vector.length; i++) max = Math.max(max, Math.abs(vector[i]));
  const scale = max / 127 || 1;
  for (let i = 0; i < vector.length; i++) codes[offset + i] = Math.round(vector[i] / scale);
  return scale;
}

/** A query as codes are scored against it: 16-bit integers and their scale. */
export interface QueryCodes {
  values: Int16Array;
  scale: number;
}

/**
 * The query's 16-bit form: values = round(query / scale), the largest as large as a 16-bit integer allows
 * while a sum over every dimension of value × code (|code| ≤ 127) stays within 32 bits (at 512-d, ±32,767:
 * steps of 1/32,767 of the largest value).
 */
export function queryCodes(query: Float32Array): QueryCodes {
  const top = Math.max(1, Math.min(32767, Math.floor(0x7fffffff / (127 * Math.max(1, query.length)))));
  let max = 0;
  for (let i = 0; i < query.length; i++) max = Math.max(max, Math.abs(query[i]));
  const scale = max / top || 1;
  const values = new Int16Array(query.length);
  // `| 0`: a rounded -0 (a small negative component) is then no speculation failure (JSC "NegativeZero").
  for (let i = 0; i < query.length; i++) values[i] = Math.round(query[i] / scale) | 0;
  return { values, scale };
}

/** Cosine similarity of a unit query and the vector whose codes start at codes[offset]. */
export function codeCosine(query: QueryCodes, codes: Int8Array, offset: number, scale: number): number {
  const values = query.values;
  // Four running sums (exact in any order: integers): independent additions overlap (512-d: 480 -> 420 ns).
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  const whole = values.length & ~3;
  let i = 0;
  for (; i < whole; i += 4) {
    a += values[i] * codes[offset + i];
    b += values[i + 1] * codes[offset + i + 1];
    c += values[i + 2] * codes[offset + i + 2];
    d += values[i + 3] * codes[offset + i + 3];
  }
  for (; i < values.length; i++) a += values[i] * codes[offset + i];
  return (a + b + c + d) * query.scale * scale;
}
