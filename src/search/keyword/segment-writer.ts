// Builds a keyword segment file from a knowledge base's chunks (format in segment-format.ts). One pass
// over the chunks tokenizes them (the same keywordTerms as the in-memory index, so scores match) and
// spills postings in runs; the dictionary is then written in UTF-8 byte order, each term's postings
// gathered from the runs and block-encoded. Memory stays bounded by a run plus the vocabulary.
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { keywordTerms } from "../tokenize.ts";
import { PostingRuns } from "./posting-runs.ts";
import { PostingEncoder, U32List } from "./posting-encoder.ts";
import { encodeHeader, HEADER_BYTES, KEYWORD_SEGMENT_FILE, MAX_TF, type Section, type SegmentHeader } from "./segment-format.ts";

/**
 * A full collection every so many chunks. Tokenizing leaves garbage (texts, term arrays) whose memory JSC
 * otherwise frees too late while this loop runs: with none the builder passed 5 GB by 700k chunks; with
 * one every 20k chunks it peaked at 3.8 GB for 1M; every 5k, at 346 MB for 200k.
 */
const COLLECT_EVERY = 5_000;

export interface SegmentChunk {
  rowid: number;
  text: string;
}

export interface WrittenSegment {
  path: string;
  chunkCount: number;
  termCount: number;
  bytes: number;
}

/** Positional writes into the segment file, each section padded to 8 bytes. */
class SegmentFile {
  readonly fd: number;
  position = HEADER_BYTES;

  constructor(readonly path: string) {
    this.fd = openSync(path, "w");
  }

  write(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.byteLength) done += writeSync(this.fd, bytes, done, bytes.byteLength - done, this.position + done);
    this.position += bytes.byteLength;
  }

  /** Starts a section: pads to 8 bytes and returns its offset. */
  section(): number {
    const pad = (8 - (this.position % 8)) % 8;
    if (pad > 0) this.write(new Uint8Array(pad));
    return this.position;
  }

  writeArray(array: Uint32Array | Uint16Array): void {
    this.write(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * Writes `dir`/keyword.seg (creating `dir`) for `chunks`, which must come in ascending rowid order.
 * Temporary run files are written beside it and removed. The caller makes the directory visible
 * (renames it) when done. `runPostings` caps the postings held in memory between spills.
 */
export function writeKeywordSegment(dir: string, chunks: Iterable<SegmentChunk>, { runPostings }: { runPostings?: number } = {}): WrittenSegment {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, KEYWORD_SEGMENT_FILE);
  const vocabulary = new Map<string, number>();
  const runs = new PostingRuns(path, () => vocabulary.size, runPostings);
  const rowids = new U32List();
  const lengths = new U32List();
  let totalLength = 0;
  try {
    const counts = new Map<number, number>();
    for (const chunk of chunks) {
      if (rowids.length > 0 && chunk.rowid <= rowids.values[rowids.length - 1]) throw new Error("segment chunks must come in ascending rowid order");
      const slot = rowids.length;
      if (slot % COLLECT_EVERY === COLLECT_EVERY - 1) Bun.gc(true);
      rowids.push(chunk.rowid);
      const terms = keywordTerms(chunk.text);
      lengths.push(terms.length);
      totalLength += terms.length;
      for (const term of terms) {
        let id = vocabulary.get(term);
        if (id === undefined) vocabulary.set(term, (id = vocabulary.size));
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      for (const [id, tf] of counts) runs.add(id, slot, Math.min(tf, MAX_TF));
      counts.clear();
    }
    runs.finish();
    return writeFile(path, runs, vocabulary, rowids.toArray(), lengths.toArray(), totalLength);
  } finally {
    runs.removeFiles();
  }
}

function writeFile(
  path: string,
  runs: PostingRuns,
  vocabulary: Map<string, number>,
  rowids: Uint32Array,
  lengths: Uint32Array,
  totalLength: number,
): WrittenSegment {
  const encoder = new TextEncoder();
  const terms = [...vocabulary].map(([term, id]) => ({ id, bytes: encoder.encode(term) }));
  vocabulary.clear();
  terms.sort((a, b) => compareBytes(a.bytes, b.bytes));

  const file = new SegmentFile(path);
  try {
    const offsets = {} as Record<Section, number>;
    offsets.rowids = file.section();
    file.writeArray(rowids);
    offsets.lengths = file.section();
    file.writeArray(lengths);

    offsets.postings = file.section();
    const encoder = new PostingEncoder(lengths, (bytes) => file.write(bytes));
    const termBlocks = new Uint32Array(terms.length + 1);
    const termDf = new Uint32Array(terms.length);
    terms.forEach((term, t) => {
      encoder.startTerm();
      termBlocks[t] = encoder.blockLast.length;
      runs.forEachPosting(term.id, (slot, tf) => {
        encoder.add(slot, tf);
        termDf[t]++;
      });
    });
    encoder.finish();
    termBlocks[terms.length] = encoder.blockLast.length;
    const postingsBytes = encoder.bytesWritten;

    offsets.termBytes = file.section();
    const termStarts = new Uint32Array(terms.length + 1);
    const termBytes = new Uint8Array(terms.reduce((sum, term) => sum + term.bytes.length, 0));
    terms.forEach((term, t) => {
      termBytes.set(term.bytes, termStarts[t]);
      termStarts[t + 1] = termStarts[t] + term.bytes.length;
    });
    file.write(termBytes);
    for (const [section, array] of [
      ["termStarts", termStarts],
      ["termBlocks", termBlocks],
      ["termDf", termDf],
      ["blockLast", encoder.blockLast.toArray()],
      ["blockOffset", encoder.blockOffset.toArray()],
      ["blockMaxTf", Uint16Array.from(encoder.blockBound.toArray(), (bound) => bound >>> 16)],
      ["blockMinLen", Uint16Array.from(encoder.blockBound.toArray(), (bound) => bound & 0xffff)],
    ] as const) {
      offsets[section] = file.section();
      file.writeArray(array);
    }
    const bytes = file.position;
    const header: SegmentHeader = {
      chunkCount: rowids.length,
      termCount: terms.length,
      blockCount: encoder.blockLast.length,
      totalLength,
      postingsBytes,
      termBytesLength: termBytes.length,
      offsets,
    };
    file.position = 0;
    file.write(encodeHeader(header));
    fsyncSync(file.fd);
    return { path, chunkCount: rowids.length, termCount: terms.length, bytes };
  } finally {
    closeSync(file.fd);
  }
}
