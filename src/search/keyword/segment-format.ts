// The keyword segment file (keyword.seg): one knowledge base's BM25 postings as of a point in time, written
// once by writeKeywordSegment and memory-mapped by KeywordSegment, so opening costs milliseconds and only
// the pages a search touches become resident. All integers little-endian; every section starts on an
// 8-byte boundary so typed-array views can sit directly on the mapped bytes.
//
//   header      HEADER_BYTES: magic "QKS1", version, chunkCount, termCount, blockCount, BLOCK_SIZE,
//               totalLength (f64), then the u64 byte offset of each section below and the postings and
//               term-bytes lengths.
//   rowids      u32[chunkCount]   chunk rowids, ascending; a chunk's index here is its "slot"
//   lengths     u32[chunkCount]   terms per chunk (BM25 length)
//   postings    u32 words         per term, its (slot, tf) pairs by ascending slot in blocks of BLOCK_SIZE
//               pairs (the term's last block may be shorter), each block starting on a word: a header
//               word (gap bits | tf bits << 8), then the block's slot gaps − 1 bit-packed at gap bits each,
//               then its tfs − 1 at tf bits each (no words when 0 bits), least significant bit first,
//               each run padded to a whole word. Gaps are from the term's previous slot (−1 before its
//               first), so blocks decode independently given the previous block's last slot. Two zero
//               words end the section (a value is read with the word after it, and a block's 0-bit tfs
//               are read at the word after its gaps).
//   termBytes   bytes             the terms' UTF-8, concatenated in byte order (the dictionary)
//   termStarts  u32[termCount+1]  term t is termBytes[termStarts[t], termStarts[t+1])
//   termBlocks  u32[termCount+1]  term t's blocks are [termBlocks[t], termBlocks[t+1])
//   termDf      u32[termCount]    chunks containing term t (its posting count)
//   blockLast   u32[blockCount]   last slot of each block (for skipping)
//   blockOffset u32[blockCount]   byte offset of each block within postings
//   blockMaxTf  u16[blockCount]   greatest tf in the block            } with blockMinLen, a bound on any of
//   blockMinLen u16[blockCount]   least chunk length in the block     } the block's BM25 contributions
//
// tf is capped at 65,535 and block lengths at 65,535 (a smaller minimum only loosens the bound).
export const KEYWORD_SEGMENT_FILE = "keyword.seg";
export const MAGIC = 0x3153_4b51; // "QKS1" read as a little-endian u32
/** 2: bit-packed blocks (1 had varints: 15.0 ms against 13.1 for the long evaluation queries on a 500k-chunk shard). */
export const VERSION = 2;
export const BLOCK_SIZE = 128;
export const MAX_TF = 0xffff;
export const HEADER_BYTES = 136;

/** Sections in file order; the header holds a u64 offset for each. */
export const SECTIONS = [
  "rowids",
  "lengths",
  "postings",
  "termBytes",
  "termStarts",
  "termBlocks",
  "termDf",
  "blockLast",
  "blockOffset",
  "blockMaxTf",
  "blockMinLen",
] as const;
export type Section = (typeof SECTIONS)[number];

export interface SegmentHeader {
  chunkCount: number;
  termCount: number;
  blockCount: number;
  totalLength: number;
  postingsBytes: number;
  termBytesLength: number;
  offsets: Record<Section, number>;
}

const OFFSETS_AT = 32;
const POSTINGS_BYTES_AT = OFFSETS_AT + 8 * SECTIONS.length;
const TERM_BYTES_LENGTH_AT = POSTINGS_BYTES_AT + 8;

export function encodeHeader(header: SegmentHeader): Uint8Array {
  const bytes = new Uint8Array(HEADER_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, VERSION, true);
  view.setUint32(8, header.chunkCount, true);
  view.setUint32(12, header.termCount, true);
  view.setUint32(16, header.blockCount, true);
  view.setUint32(20, BLOCK_SIZE, true);
  view.setFloat64(24, header.totalLength, true);
  SECTIONS.forEach((section, i) => view.setBigUint64(OFFSETS_AT + 8 * i, BigInt(header.offsets[section]), true));
  view.setBigUint64(POSTINGS_BYTES_AT, BigInt(header.postingsBytes), true);
  view.setBigUint64(TERM_BYTES_LENGTH_AT, BigInt(header.termBytesLength), true);
  return bytes;
}

export function decodeHeader(bytes: Uint8Array, path: string): SegmentHeader {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < HEADER_BYTES || view.getUint32(0, true) !== MAGIC) throw new Error(`${path} is not a keyword segment`);
  const version = view.getUint32(4, true);
  if (version !== VERSION || view.getUint32(20, true) !== BLOCK_SIZE) throw new Error(`${path}: unsupported keyword segment version ${version}`);
  const offsets = Object.fromEntries(SECTIONS.map((section, i) => [section, Number(view.getBigUint64(OFFSETS_AT + 8 * i, true))]));
  return {
    chunkCount: view.getUint32(8, true),
    termCount: view.getUint32(12, true),
    blockCount: view.getUint32(16, true),
    totalLength: view.getFloat64(24, true),
    postingsBytes: Number(view.getBigUint64(POSTINGS_BYTES_AT, true)),
    termBytesLength: Number(view.getBigUint64(TERM_BYTES_LENGTH_AT, true)),
    offsets: offsets as Record<Section, number>,
  };
}
