// The WebAssembly search kernels (kernels.wat): the vector scans' inner loops and the keyword dense sum's
// (summing posting blocks, reading the window back), compiled once per thread on first use. Their inputs
// and outputs live in an instance's memory, which grows to the largest request and stays that size: one
// instance per thread serves every scan (threadKernels), and data kept between searches gets its own.
import { KERNELS_WASM } from "./kernels-wasm.ts";

const PAGE = 65536;
let compiled: WebAssembly.Module | null = null;

export class Kernels {
  private readonly memory: WebAssembly.Memory;
  /** Views of the memory, remade when it grows (growing detaches the old buffer). */
  bytes!: Uint8Array;
  floats!: Float32Array;
  doubles!: Float64Array;
  readonly pqBlockScores: (codes: number, blocks: number, parts: number, table: number, out: number) => void;
  readonly codeDots: (query: number, codes: number, count: number, dimension: number, out: number) => void;
  readonly floatDots: (query: number, rows: number, count: number, dimension: number, out: number) => void;
  readonly takeAbove: (at: number, end: number, threshold: number) => number;
  readonly firstAboveF32: (at: number, end: number, threshold: number) => number;
  readonly sumPostingBlocks: (
    at: number,
    blocks: number,
    lastCount: number,
    slot: number,
    low: number,
    lengths: number,
    factor: number,
    normBase: number,
    normPerTerm: number,
    work: number,
  ) => void;
  /** sumPostingBlocks' unpacking on its own, for its test. */
  readonly unpackValues: (src: number, bits: number, count: number, out: number, table: number) => void;

  constructor() {
    compiled ??= new WebAssembly.Module(Buffer.from(KERNELS_WASM, "base64"));
    const { exports } = new WebAssembly.Instance(compiled, {});
    this.memory = exports.memory as WebAssembly.Memory;
    this.pqBlockScores = exports.pqBlockScores as Kernels["pqBlockScores"];
    this.codeDots = exports.codeDots as Kernels["codeDots"];
    this.floatDots = exports.floatDots as Kernels["floatDots"];
    this.takeAbove = exports.takeAbove as Kernels["takeAbove"];
    this.firstAboveF32 = exports.firstAboveF32 as Kernels["firstAboveF32"];
    this.sumPostingBlocks = exports.sumPostingBlocks as Kernels["sumPostingBlocks"];
    this.unpackValues = exports.unpackValues as Kernels["unpackValues"];
    this.view();
  }

  /** Makes the memory at least `size` bytes long. */
  reserve(size: number): void {
    if (size <= this.memory.buffer.byteLength) return;
    this.memory.grow(Math.ceil((size - this.memory.buffer.byteLength) / PAGE));
    this.view();
  }

  private view(): void {
    this.bytes = new Uint8Array(this.memory.buffer);
    this.floats = new Float32Array(this.memory.buffer);
    this.doubles = new Float64Array(this.memory.buffer);
  }
}

/** Widest values the kernels unpack eight at a time (kernels.wat $unpack); wider ones go one by one. */
const SWIZZLED_BITS = 25;
const ENTRY_BYTES = 80;
/** Bytes of the unpacking table (writeUnpackTable): an entry for each width up to SWIZZLED_BITS. */
export const UNPACK_TABLE_BYTES = (SWIZZLED_BITS + 1) * ENTRY_BYTES;
/**
 * Room sumPostingBlocks works in: the unpacking table, then a block's gaps and tfs (128 u32s each and 8
 * spare), at the offsets kernels.wat uses (2,080 and 2,080 + 544 bytes from the room's start).
 */
export const SUM_WORK_BYTES = UNPACK_TABLE_BYTES + 2 * 136 * Uint32Array.BYTES_PER_ELEMENT;

/**
 * Writes the table kernels.wat $unpack reads at `at` of the memory. Entry `bits` (80 bytes): for values
 * 0-3 and then 4-7 of each eight, the swizzle pattern that puts each value's four bytes in its lane (16
 * bytes) and each lane's multiplier 2^(7 - first bit) (4 u32s); then the byte offset of value 4 (u32).
 * Eight values of `bits` bits take `bits` bytes, so the pattern repeats.
 */
export function writeUnpackTable(kernels: Kernels, at: number): void {
  const view = new DataView(kernels.bytes.buffer, at, UNPACK_TABLE_BYTES);
  for (let bits = 0; bits <= SWIZZLED_BITS; bits++) {
    const entry = bits * ENTRY_BYTES;
    const secondGroupByte = (4 * bits) >>> 3;
    for (const [group, groupByte, patternAt] of [[0, 0, 0], [4, secondGroupByte, 32]]) {
      for (let lane = 0; lane < 4; lane++) {
        const bit = (group + lane) * bits - 8 * groupByte;
        for (let k = 0; k < 4; k++) view.setUint8(entry + patternAt + 4 * lane + k, (bit >>> 3) + k);
        view.setUint32(entry + patternAt + 16 + 4 * lane, 1 << (7 - (bit & 7)), true);
      }
    }
    view.setUint32(entry + 64, secondGroupByte, true);
  }
}

let kernels: Kernels | null = null;

/** This thread's kernels. */
export function threadKernels(): Kernels {
  return (kernels ??= new Kernels());
}
