// Turns encoder outputs into sentence vectors. Rows are padded at the end, so row r's real tokens (the
// ones its attention_mask marks) are its first lengths[r] positions.

export type Pooling = "mean" | "cls";

/** hidden: [batch, seq, dim] row-major. Returns one (unnormalized) vector per row. */
export function poolTokens(hidden: Float32Array, dims: readonly number[], lengths: number[], pooling: Pooling): Float32Array[] {
  const [batch, seq, dim] = dims;
  const vectors: Float32Array[] = [];
  for (let r = 0; r < batch; r++) {
    const rowStart = r * seq * dim;
    if (pooling === "cls") {
      vectors.push(hidden.slice(rowStart, rowStart + dim));
      continue;
    }
    const sum = new Float64Array(dim);
    for (let t = 0; t < lengths[r]; t++) {
      const offset = rowStart + t * dim;
      for (let d = 0; d < dim; d++) sum[d] += hidden[offset + d];
    }
    vectors.push(Float32Array.from(sum, (v) => v / lengths[r]));
  }
  return vectors;
}

/** Splits a [batch, dim] output into one vector per row. */
export function splitRows(output: Float32Array, dims: readonly number[]): Float32Array[] {
  const [batch, dim] = dims;
  return Array.from({ length: batch }, (_, r) => output.slice(r * dim, (r + 1) * dim));
}

/** Scales to unit length in place (a zero vector stays zero) and returns it. */
export function l2Normalize(vector: Float32Array): Float32Array {
  let squares = 0;
  for (const v of vector) squares += v * v;
  const norm = Math.sqrt(squares);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}
