// One query's exact scores on 8-bit codes (vector/int8-codes.ts) computed by the WebAssembly kernel,
// bit for bit what codeCosine gives.
import { KernelScan } from "./kernel-scan.ts";
import { queryCodes } from "./int8-codes.ts";
import type { TopK } from "../topk.ts";

export class CodeScan extends KernelScan {
  private readonly queryScale: number;

  /** `codes`: `dimension` values per slot, `scales` one per slot; hits are pushed into `best` by slot. */
  constructor(
    query: Float32Array,
    codes: Int8Array,
    private readonly scales: Float32Array,
    private readonly best: TopK,
  ) {
    super(codes, query.length, query.length * Int16Array.BYTES_PER_ELEMENT);
    const { values, scale } = queryCodes(query);
    // Copied from the values' own (new) buffer: a view made on the kernels' memory would stay recorded (byte-copy.ts).
    Buffer.from(values.buffer, values.byteOffset, values.byteLength).copy(this.kernels.bytes, 0);
    this.queryScale = scale;
  }

  /** Scores the queued slots and offers them to `best`, in the order they were queued. */
  flush(): void {
    const { kernels, pending, best, scales, indexes } = this;
    if (pending === 0) return;
    kernels.codeDots(0, this.codesAt, pending, this.codeBytes, this.scoresAt);
    const dots = kernels.doubles;
    const first = this.scoresAt / Float64Array.BYTES_PER_ELEMENT;
    let threshold = best.threshold;
    for (let i = 0; i < pending; i++) {
      const slot = indexes[i];
      const score = dots[first + i] * this.queryScale * scales[slot];
      if (score > threshold) {
        best.push(slot, score);
        threshold = best.threshold;
      }
    }
    this.pending = 0;
  }
}
