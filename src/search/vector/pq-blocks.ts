// The layout of a segment's product-quantized codes (format 4): list positions in blocks of PQ_BLOCK, and
// within a block part-major, so that one 16-byte load holds one part of 16 codes, which is what the
// kernel's table lookups take (kernels/kernels.wat pqBlockScores). Position p's byte of part k is at
// ((p / 16) × parts + k) × 16 + p % 16; the last block is padded to 16 codes.

export const PQ_BLOCK = 16;

/** Bytes that hold `count` codes of `parts` bytes. */
export function blockedLength(count: number, parts: number): number {
  return Math.ceil(count / PQ_BLOCK) * PQ_BLOCK * parts;
}

/** The bytes [from, to) of the blocks that hold the codes of positions [start, end). */
export function blockedRange(start: number, end: number, parts: number): [number, number] {
  return [Math.floor(start / PQ_BLOCK) * PQ_BLOCK * parts, blockedLength(end, parts)];
}

/** Where code `position`'s part 0 is; its part k is PQ_BLOCK × k bytes further. */
function codeStart(position: number, parts: number): number {
  const lane = position % PQ_BLOCK;
  return (position - lane) * parts + lane;
}

/** Copies code `from` of blocked `source` to code `to` of blocked `target`, starting `targetOffset` bytes in. */
export function copyBlockedCode(source: Uint8Array, from: number, target: Uint8Array, to: number, parts: number, targetOffset = 0): void {
  let s = codeStart(from, parts);
  let t = targetOffset + codeStart(to, parts);
  for (let part = 0; part < parts; part++, s += PQ_BLOCK, t += PQ_BLOCK) target[t] = source[s];
}

/** Stores `code` (`parts` bytes, one per part) as code `to` of blocked `target`. */
export function setBlockedCode(target: Uint8Array, to: number, code: Uint8Array): void {
  const parts = code.length;
  let t = codeStart(to, parts);
  for (let part = 0; part < parts; part++, t += PQ_BLOCK) target[t] = code[part];
}

/** Code `from` of blocked `source`, one byte per part. */
export function blockedCode(source: Uint8Array, from: number, parts: number): Uint8Array {
  const code = new Uint8Array(parts);
  let s = codeStart(from, parts);
  for (let part = 0; part < parts; part++, s += PQ_BLOCK) code[part] = source[s];
  return code;
}
