// Encodes a term's (slot, tf) postings into blocks (format in segment-format.ts) and records each block's
// skip and bound entries. Bytes go to a sink in large buffers.
import { BLOCK_SIZE, MAX_TF } from "./segment-format.ts";

/** Growable u32 list (block tables can hold millions of entries). */
export class U32List {
  values = new Uint32Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Uint32Array(this.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }

  toArray(): Uint32Array {
    return this.values.subarray(0, this.length);
  }
}

const FLUSH_BYTES = 4 * 1024 * 1024;
/** The most a block takes: its header word, then gaps and tfs of at most 31 bits each. */
const MAX_BLOCK_BYTES = 4 + 2 * 4 * BLOCK_SIZE;

/** Bits needed for `value` (0 for 0). */
function bitWidth(value: number): number {
  return 32 - Math.clz32(value);
}

export class PostingEncoder {
  readonly blockLast = new U32List();
  readonly blockOffset = new U32List();
  /** max tf << 16 | min length, split into the two u16 sections when written. */
  readonly blockBound = new U32List();
  private readonly buffer = new Uint32Array((FLUSH_BYTES + MAX_BLOCK_BYTES) / 4);
  /** Words of `buffer` in use. */
  private used = 0;
  private flushed = 0;
  /** The block being filled: its slot gaps − 1 and tfs − 1. */
  private readonly gaps = new Int32Array(BLOCK_SIZE);
  private readonly tfs = new Int32Array(BLOCK_SIZE);
  private inBlock = 0;
  private previous = -1;
  private minLength = 0xffff;

  constructor(
    private readonly lengths: Uint32Array,
    private readonly sink: (bytes: Uint8Array) => void,
  ) {}

  get bytesWritten(): number {
    return this.flushed + 4 * this.used;
  }

  /** Starts a new term: its first block begins at the next posting. */
  startTerm(): void {
    if (this.inBlock > 0) this.endBlock();
    this.previous = -1;
  }

  add(slot: number, tf: number): void {
    this.gaps[this.inBlock] = slot - this.previous - 1;
    this.tfs[this.inBlock] = Math.min(tf, MAX_TF) - 1;
    this.previous = slot;
    const length = Math.min(this.lengths[slot], 0xffff);
    if (length < this.minLength) this.minLength = length;
    if (++this.inBlock === BLOCK_SIZE) this.endBlock();
  }

  /** Ends the last term and hands over every remaining byte, then the padding that decoders read past the end. */
  finish(): void {
    if (this.inBlock > 0) this.endBlock();
    this.buffer[this.used++] = 0;
    this.buffer[this.used++] = 0;
    this.flush();
  }

  private endBlock(): void {
    const count = this.inBlock;
    let maxGap = 0;
    let maxTf = 0;
    for (let i = 0; i < count; i++) {
      maxGap |= this.gaps[i]; // only its bit width is needed
      maxTf = Math.max(maxTf, this.tfs[i]);
    }
    const gapBits = bitWidth(maxGap);
    const tfBits = bitWidth(maxTf);
    if (this.bytesWritten > 0xffff_ffff) throw new Error("keyword segment postings exceed 4 GiB");
    this.blockOffset.push(this.bytesWritten);
    this.buffer[this.used++] = gapBits | (tfBits << 8);
    this.pack(this.gaps, count, gapBits);
    this.pack(this.tfs, count, tfBits);
    this.blockLast.push(this.previous);
    this.blockBound.push((((maxTf + 1) << 16) | this.minLength) >>> 0);
    this.inBlock = 0;
    this.minLength = 0xffff;
    if (this.used * 4 >= FLUSH_BYTES) this.flush();
  }

  /** Appends `count` values of `bits` bits each, least significant bit first, in whole words. */
  private pack(values: Int32Array, count: number, bits: number): void {
    if (bits === 0) return;
    const buffer = this.buffer;
    let word = 0;
    let bit = 0;
    for (let i = 0; i < count; i++) {
      const value = values[i];
      word |= value << bit;
      bit += bits;
      if (bit >= 32) {
        buffer[this.used++] = word;
        bit -= 32;
        // The value's bits that did not fit (none when it ended exactly at the word's end).
        word = bit === 0 ? 0 : value >>> (bits - bit);
      }
    }
    if (bit > 0) buffer[this.used++] = word;
  }

  private flush(): void {
    if (this.used === 0) return;
    this.sink(new Uint8Array(this.buffer.buffer, 0, 4 * this.used));
    this.flushed += 4 * this.used;
    this.used = 0;
  }
}
