// The layout of a segment's product-quantized codes (format 5): list positions in blocks of PQ_BLOCK, and
// within a block byte-major, so that one 16-byte load holds one byte (two parts) of 16 codes, which is
// what the kernel's table lookups take (kernels/kernels.wat pqBlockScores). Position p's byte k is at
// ((p / 16) × codeBytes + k) × 16 + p % 16; the last block is padded to 16 codes.

export const PQ_BLOCK = 16;

/** Bytes that hold `count` codes of `codeBytes` bytes. */
export function blockedLength(count: number, codeBytes: number): number {
  return Math.ceil(count / PQ_BLOCK) * PQ_BLOCK * codeBytes;
}

/** The bytes [from, to) of the blocks that hold the codes of positions [start, end). */
export function blockedRange(start: number, end: number, codeBytes: number): [number, number] {
  return [Math.floor(start / PQ_BLOCK) * PQ_BLOCK * codeBytes, blockedLength(end, codeBytes)];
}

/** Where code `position`'s byte 0 is; its byte k is PQ_BLOCK × k bytes further. */
function codeStart(position: number, codeBytes: number): number {
  const lane = position % PQ_BLOCK;
  return (position - lane) * codeBytes + lane;
}

/** Copies code `from` of blocked `source` to code `to` of blocked `target`, starting `targetOffset` bytes in. */
export function copyBlockedCode(source: Uint8Array, from: number, target: Uint8Array, to: number, codeBytes: number, targetOffset = 0): void {
  let s = codeStart(from, codeBytes);
  let t = targetOffset + codeStart(to, codeBytes);
  for (let byte = 0; byte < codeBytes; byte++, s += PQ_BLOCK, t += PQ_BLOCK) target[t] = source[s];
}

/** Stores `code` (its bytes, ProductQuantizer.encode's) as code `to` of blocked `target`. */
export function setBlockedCode(target: Uint8Array, to: number, code: Uint8Array): void {
  const codeBytes = code.length;
  let t = codeStart(to, codeBytes);
  for (let byte = 0; byte < codeBytes; byte++, t += PQ_BLOCK) target[t] = code[byte];
}

/** The bytes of code `from` of blocked `source`. */
export function blockedCode(source: Uint8Array, from: number, codeBytes: number): Uint8Array {
  const code = new Uint8Array(codeBytes);
  let s = codeStart(from, codeBytes);
  for (let byte = 0; byte < codeBytes; byte++, s += PQ_BLOCK) code[byte] = source[s];
  return code;
}
