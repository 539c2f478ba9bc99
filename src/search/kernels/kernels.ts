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
  readonly firstAbove: (at: number, end: number, threshold: number) => number;
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
  ) => void;

  constructor() {
    compiled ??= new WebAssembly.Module(Buffer.from(KERNELS_WASM, "base64"));
    const { exports } = new WebAssembly.Instance(compiled, {});
    this.memory = exports.memory as WebAssembly.Memory;
    this.pqBlockScores = exports.pqBlockScores as Kernels["pqBlockScores"];
    this.codeDots = exports.codeDots as Kernels["codeDots"];
    this.floatDots = exports.floatDots as Kernels["floatDots"];
    this.firstAbove = exports.firstAbove as Kernels["firstAbove"];
    this.firstAboveF32 = exports.firstAboveF32 as Kernels["firstAboveF32"];
    this.sumPostingBlocks = exports.sumPostingBlocks as Kernels["sumPostingBlocks"];
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

let kernels: Kernels | null = null;

/** This thread's kernels. */
export function threadKernels(): Kernels {
  return (kernels ??= new Kernels());
}
