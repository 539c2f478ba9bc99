// A baseline JPEG encoder for 8-bit greyscale pixels (one component), for the JPEG-in-TIFF fixture:
// @napi-rs/canvas encodes from RGBA and writes three components, and the pure JavaScript encoders on npm
// (jpeg-js and its ports) do too. Every coefficient is quantized by 2 (a smaller file; by 1 it decodes
// exactly too) and coded with the JPEG standard's example Huffman tables (ITU T.81 Annex K.3).

const ZIGZAG = [
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57,
  50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];
/** Codes of each length 1–16, then the symbols in code order: luminance DC (K.3.1) and AC (K.3.2). */
const DC_BITS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];
const DC_VALUES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
const AC_BITS = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d];
const AC_VALUES = [
  0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1,
  0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26,
  0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56,
  0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85,
  0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa,
  0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6,
  0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9,
  0xfa,
];
const END_OF_BLOCK = 0x00;
/** The one quantizer step, for every coefficient. */
const STEP = 2;
const SIXTEEN_ZEROS = 0xf0;

/** symbol → [code, length], the canonical codes the bits and values define. */
function huffmanCodes(bits: number[], values: number[]): Map<number, [number, number]> {
  const codes = new Map<number, [number, number]>();
  let code = 0;
  let k = 0;
  for (let length = 1; length <= 16; length++, code <<= 1) for (let i = 0; i < bits[length - 1]; i++) codes.set(values[k++], [code++, length]);
  return codes;
}

class BitWriter {
  readonly bytes: number[] = [];
  private buffer = 0;
  private count = 0;

  write(value: number, length: number): void {
    for (let bit = length - 1; bit >= 0; bit--) {
      this.buffer = (this.buffer << 1) | ((value >> bit) & 1);
      if (++this.count === 8) this.flushByte();
    }
  }

  /** Pads the last byte with ones, as the standard asks. */
  finish(): void {
    while (this.count !== 0) this.write(1, 1);
  }

  private flushByte(): void {
    this.bytes.push(this.buffer);
    if (this.buffer === 0xff) this.bytes.push(0); // a stuffed zero: 0xFF in the data is not a marker
    this.buffer = 0;
    this.count = 0;
  }
}

/** The magnitude category of a coefficient and the bits that follow its code. */
function category(value: number): [number, number] {
  const size = value === 0 ? 0 : Math.floor(Math.log2(Math.abs(value))) + 1;
  return [size, value >= 0 ? value : value + (1 << size) - 1];
}

/** The 64 DCT coefficients of one 8×8 block of level-shifted pixels, quantized. */
function forwardDct(block: Float64Array): Int32Array {
  const out = new Int32Array(64);
  for (let v = 0; v < 8; v++) {
    for (let u = 0; u < 8; u++) {
      let sum = 0;
      for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) sum += block[y * 8 + x] * COSINES[x * 8 + u] * COSINES[y * 8 + v];
      out[v * 8 + u] = Math.round((0.25 * (u === 0 ? Math.SQRT1_2 : 1) * (v === 0 ? Math.SQRT1_2 : 1) * sum) / STEP);
    }
  }
  return out;
}
const COSINES = Float64Array.from({ length: 64 }, (_, i) => Math.cos(((2 * Math.floor(i / 8) + 1) * (i % 8) * Math.PI) / 16));

function segment(marker: number, body: number[]): number[] {
  return [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body];
}

/** A JPEG of `grey` (width × height bytes, row by row). */
export function greyJpeg(grey: Uint8Array, width: number, height: number): Uint8Array {
  const dc = huffmanCodes(DC_BITS, DC_VALUES);
  const ac = huffmanCodes(AC_BITS, AC_VALUES);
  const bits = new BitWriter();
  const put = (codes: Map<number, [number, number]>, symbol: number) => bits.write(...codes.get(symbol)!);
  const block = new Float64Array(64);
  let previousDc = 0;
  for (let top = 0; top < height; top += 8) {
    for (let left = 0; left < width; left += 8) {
      // Past the right and bottom edges the last column and row repeat.
      for (let y = 0; y < 8; y++) {
        for (let x = 0; x < 8; x++) block[y * 8 + x] = grey[Math.min(top + y, height - 1) * width + Math.min(left + x, width - 1)] - 128;
      }
      const coefficients = forwardDct(block);
      const [dcSize, dcBits] = category(coefficients[0] - previousDc);
      previousDc = coefficients[0];
      put(dc, dcSize);
      bits.write(dcBits, dcSize);
      let zeros = 0;
      for (let k = 1; k < 64; k++) {
        const value = coefficients[ZIGZAG[k]];
        if (value === 0) {
          zeros++;
          continue;
        }
        for (; zeros > 15; zeros -= 16) put(ac, SIXTEEN_ZEROS);
        const [size, extra] = category(value);
        put(ac, (zeros << 4) | size);
        bits.write(extra, size);
        zeros = 0;
      }
      if (zeros > 0) put(ac, END_OF_BLOCK);
    }
  }
  bits.finish();
  return Uint8Array.from([
    0xff, 0xd8,
    ...segment(0xdb, [0x00, ...new Array(64).fill(STEP)]),
    ...segment(0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]),
    ...segment(0xc4, [0x00, ...DC_BITS, ...DC_VALUES]),
    ...segment(0xc4, [0x10, ...AC_BITS, ...AC_VALUES]),
    ...segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    ...bits.bytes,
    0xff, 0xd9,
  ]);
}
