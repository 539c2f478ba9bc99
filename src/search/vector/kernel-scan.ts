// Scoring many codes of a segment with a WebAssembly kernel (search/kernels): indexes are queued, their codes
// copied into the kernel's memory, and each full batch (and each flush) scored in one call. The memory
// holds, from 0: the query's part (a table, a vector), the batch's scores, the batch's codes. One scan
// per thread may be in use at a time: they share that memory.
import { bufferOf } from "../byte-copy.ts";
import { threadKernels, type Kernels } from "../kernels/kernels.ts";
import { inMemory, willNeed } from "../page-advice.ts";

/** Codes scored per kernel call (a multiple of the product-quantized code blocks, pq-blocks.ts). */
export const BATCH = 4096;
/** Room per score (an f64; f32 scores use half). */
const SCORE_BYTES = 8;
/** Codes whose pages addEach checks are in memory before it reads them. */
const PROBED_CODES = 4;

const queuedIndexes = new Int32Array(BATCH);

export abstract class KernelScan {
  protected readonly kernels: Kernels = threadKernels();
  /** The queued indexes, in order (shared like the kernel's memory). */
  protected readonly indexes = queuedIndexes;
  protected pending = 0;
  /** The codes, as a Buffer that copies ranges without making views (byte-copy.ts). */
  protected readonly source: Buffer;
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
    this.source = bufferOf(source);
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
      this.source.copy(this.kernels.bytes, this.codesAt + this.pending * codeBytes, from * codeBytes, (from + count) * codeBytes);
      for (let i = 0; i < count; i++) this.indexes[this.pending++] = from++;
    }
  }

  /** Queues the code of `index`. */
  add(index: number): void {
    if (this.pending === BATCH) this.flush();
    const { codeBytes } = this;
    const from = index * codeBytes;
    this.source.copy(this.kernels.bytes, this.codesAt + this.pending * codeBytes, from, from + codeBytes);
    this.indexes[this.pending++] = index;
  }

  /**
   * Queues the codes of `indexes`, scattered ones (a search's best candidates). Each code's first byte is
   * read before any is copied: those loads do not wait on one another, so the memory fetches (and page
   * walks) they start overlap, where copy after copy would wait for each in turn (1M 512-byte codes, the
   * 1,000 candidates of a 500k shard: 0.77 -> 0.59 ms).
   * Where some of the first few codes' pages are not in memory (after a restart, before the segment is paged
   * in), all their pages are asked for at once first (page-advice.ts): the disk reads then overlap too, where
   * each fault read 8 MB around its page on this machine. 1M chunks, the segment's files out of memory, a
   * first search in a new process: 381-609 -> 96-109 ms with the lists' read-ahead (segment.ts); finding
   * out by reading 4 codes instead of asking the OS left 174-194 ms. In memory the check costs 4 system
   * calls; asking for every page there would cost ~3.4 ms.
   */
  addEach(indexes: ArrayLike<number>): void {
    const { codeBytes, source } = this;
    let cold = false;
    for (let i = 0; i < Math.min(PROBED_CODES, indexes.length) && !cold; i++) cold = !inMemory(source, indexes[i] * codeBytes);
    if (cold) for (let i = 0; i < indexes.length; i++) willNeed(source, indexes[i] * codeBytes, (indexes[i] + 1) * codeBytes);
    let touched = 0;
    for (let i = 0; i < indexes.length; i++) touched += source[indexes[i] * codeBytes];
    this.touched = touched;
    for (let i = 0; i < indexes.length; i++) this.add(indexes[i]);
  }

  /** Scores what is queued. */
  abstract flush(): void;
}
