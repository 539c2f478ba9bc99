// Scoring many codes of a segment with a WebAssembly kernel (search/kernels): indexes are queued, their codes
// copied into the kernel's memory, and each full batch (and each flush) scored in one call. The memory
// holds, from 0: the query's part (a table, a vector), the batch's scores, the batch's codes. One scan
// per thread may be in use at a time: they share that memory.
import { threadKernels, type Kernels } from "../kernels/kernels.ts";

/** Codes scored per kernel call (a multiple of the product-quantized code blocks, pq-blocks.ts). */
export const BATCH = 4096;
/**
 * Codes up to this long are copied by a loop, longer ones by set() (measured from random places of 64 MB:
 * 64-byte codes 212 ns by a loop, 286 by set(); 512-byte codes 628 and 173 ns).
 */
const LOOP_COPY_BYTES = 128;
/** Room per score (an f64; f32 scores use half). */
const SCORE_BYTES = 8;

const queuedIndexes = new Int32Array(BATCH);

export abstract class KernelScan {
  protected readonly kernels: Kernels = threadKernels();
  /** The queued indexes, in order (shared like the kernel's memory). */
  protected readonly indexes = queuedIndexes;
  protected pending = 0;
  protected readonly source: Uint8Array;
  protected readonly scoresAt: number;
  protected readonly codesAt: number;
  /** The sum of the bytes addEach read first: kept, so that the compiler cannot drop those reads. */
  private touched = 0;

  /** `source`: the codes, `codeBytes` each; `queryBytes`: the room the query's part takes at 0. */
  protected constructor(
    source: Uint8Array | Int8Array,
    protected readonly codeBytes: number,
    queryBytes: number,
  ) {
    this.source = source instanceof Uint8Array ? source : new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    this.scoresAt = Math.ceil(queryBytes / SCORE_BYTES) * SCORE_BYTES;
    this.codesAt = this.scoresAt + BATCH * SCORE_BYTES;
    this.kernels.reserve(this.codesAt + BATCH * codeBytes);
  }

  /** Queues the codes of indexes [from, to). */
  addRange(from: number, to: number): void {
    const { codeBytes } = this;
    while (from < to) {
      if (this.pending === BATCH) this.flush();
      const count = Math.min(to - from, BATCH - this.pending);
      this.kernels.bytes.set(this.source.subarray(from * codeBytes, (from + count) * codeBytes), this.codesAt + this.pending * codeBytes);
      for (let i = 0; i < count; i++) this.indexes[this.pending++] = from++;
    }
  }

  /** Queues the code of `index`. */
  add(index: number): void {
    if (this.pending === BATCH) this.flush();
    const { codeBytes, source } = this;
    const bytes = this.kernels.bytes;
    const from = index * codeBytes;
    const to = this.codesAt + this.pending * codeBytes;
    // A short code is copied fastest by a loop, a long one by making a subarray to set() from.
    if (codeBytes > LOOP_COPY_BYTES) bytes.set(source.subarray(from, from + codeBytes), to);
    else for (let i = 0; i < codeBytes; i++) bytes[to + i] = source[from + i];
    this.indexes[this.pending++] = index;
  }

  /**
   * Queues the codes of `indexes`, scattered ones (a search's best candidates). Each code's first byte is
   * read before any is copied: those loads do not wait on one another, so the memory fetches (and page
   * walks) they start overlap, where copy after copy would wait for each in turn (1M 512-byte codes, the
   * 1,000 candidates of a 500k shard: 0.77 -> 0.59 ms).
   */
  addEach(indexes: ArrayLike<number>): void {
    const { codeBytes, source } = this;
    let touched = 0;
    for (let i = 0; i < indexes.length; i++) touched += source[indexes[i] * codeBytes];
    this.touched = touched;
    for (let i = 0; i < indexes.length; i++) this.add(indexes[i]);
  }

  /** Scores what is queued. */
  abstract flush(): void;
}
