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

export class PostingEncoder {
  readonly blockLast = new U32List();
  readonly blockOffset = new U32List();
  /** max tf << 16 | min length, split into the two u16 sections when written. */
  readonly blockBound = new U32List();
  private buffer = new Uint8Array(FLUSH_BYTES + 64);
  private used = 0;
  private flushed = 0;
  private inBlock = 0;
  private previous = -1;
  private maxTf = 0;
  private minLength = 0xffff;

  constructor(
    private readonly lengths: Uint32Array,
    private readonly sink: (bytes: Uint8Array) => void,
  ) {}

  get bytesWritten(): number {
    return this.flushed + this.used;
  }

  /** Starts a new term: its first block begins at the next posting. */
  startTerm(): void {
    if (this.inBlock > 0) this.endBlock();
    this.previous = -1;
  }

  add(slot: number, tf: number): void {
    if (this.inBlock === 0) this.blockOffset.push(this.bytesWritten);
    tf = Math.min(tf, MAX_TF);
    this.varint((slot - this.previous) * 2 + (tf > 1 ? 1 : 0));
    if (tf > 1) this.varint(tf);
    this.previous = slot;
    if (tf > this.maxTf) this.maxTf = tf;
    const length = Math.min(this.lengths[slot], 0xffff);
    if (length < this.minLength) this.minLength = length;
    if (++this.inBlock === BLOCK_SIZE) this.endBlock();
  }

  /** Ends the last term and hands over every remaining byte. */
  finish(): void {
    if (this.inBlock > 0) this.endBlock();
    this.flush();
  }

  private endBlock(): void {
    if (this.bytesWritten > 0xffff_ffff) throw new Error("keyword segment postings exceed 4 GiB");
    this.blockLast.push(this.previous);
    this.blockBound.push(((this.maxTf << 16) | this.minLength) >>> 0);
    this.inBlock = 0;
    this.maxTf = 0;
    this.minLength = 0xffff;
  }

  private varint(value: number): void {
    while (value >= 0x80) {
      this.buffer[this.used++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.buffer[this.used++] = value;
    if (this.used >= FLUSH_BYTES) this.flush();
  }

  private flush(): void {
    if (this.used === 0) return;
    this.sink(this.buffer.subarray(0, this.used));
    this.flushed += this.used;
    this.used = 0;
  }
}
