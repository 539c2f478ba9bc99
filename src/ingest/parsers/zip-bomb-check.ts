import { inflateRawSync } from "node:zlib";
import { PACKAGE_LIMITS } from "./package-limits.ts";
import { ParseError } from "./types.ts";

// Checks what an Office package decompresses to before any zip reader opens it. Every entry of the
// central directory is inflated from its local header to the end of its deflate stream, which is
// all either reader does: jszip (mammoth, pptx) by central directory entry, SheetJS (xlsx) eagerly
// for every entry, under the local header's name. So duplicate names, lying sizes or entries jszip
// would hide behind another of the same name cannot slip a part past the check.

const MB = 1024 * 1024;
const ZIP_BOMB = "it looks like a zip bomb";
const ZIP64_END_LOCATOR = 0x07064b50;
const ZIP64_END_OF_DIRECTORY = 0x06064b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const UNKNOWN_32 = 0xffffffff;

/**
 * Throws a ParseError saying the file looks like a zip bomb when it has more than
 * PACKAGE_LIMITS.parts entries or inflates to more than the part or file limit, and a plain Error
 * when the zip structure cannot be read (the caller reports the file as damaged). The sizes the headers
 * declare are not trusted: inflation is counted and cut off at the limit.
 */
export function assertZipWithinLimits(data: Uint8Array): void {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const directory = centralDirectory(bytes);
  let total = 0;
  let entries = 0;
  for (let at = directory.offset; at + 46 <= bytes.length && bytes.readUInt32LE(at) === DIRECTORY_ENTRY; ) {
    if (++entries > PACKAGE_LIMITS.parts) throw new ParseError(`The file has more than ${PACKAGE_LIMITS.parts} parts; ${ZIP_BOMB}`);
    const method = bytes.readUInt16LE(at + 10);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const name = bytes.toString("utf8", at + 46, at + 46 + nameLength);
    const sizes = {
      compressed: bytes.readUInt32LE(at + 20),
      uncompressed: bytes.readUInt32LE(at + 24),
      localOffset: bytes.readUInt32LE(at + 42),
    };
    readZip64Sizes(bytes.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength), sizes);
    total += inflatedSize(bytes, name, method, sizes, PACKAGE_LIMITS.fileBytes - total);
    at += 46 + nameLength + extraLength + bytes.readUInt16LE(at + 32);
  }
  // Otherwise the directory is not where the end record says (jszip then looks for it elsewhere,
  // e.g. after bytes prepended to the zip) and the entries checked are not the ones read.
  if (entries !== directory.entries) throw new Error(`central directory has ${entries} entries, its end record says ${directory.entries}`);
}

/** Where the central directory starts and how many entries it has, from the (Zip64) end of central directory record. */
function centralDirectory(bytes: Buffer): { offset: number; entries: number } {
  const end = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end === -1 || end + 22 > bytes.length) throw new Error("no end of central directory");
  const offset = bytes.readUInt32LE(end + 16);
  const entries = bytes.readUInt16LE(end + 10);
  if (offset !== UNKNOWN_32 && entries !== 0xffff) return { offset, entries };
  const locator = end - 20;
  if (locator < 0 || bytes.readUInt32LE(locator) !== ZIP64_END_LOCATOR) throw new Error("no Zip64 end of central directory locator");
  const record = Number(bytes.readBigUInt64LE(locator + 8));
  if (record + 56 > bytes.length || bytes.readUInt32LE(record) !== ZIP64_END_OF_DIRECTORY) throw new Error("no Zip64 end of central directory");
  return { offset: Number(bytes.readBigUInt64LE(record + 48)), entries: Number(bytes.readBigUInt64LE(record + 32)) };
}

interface EntrySizes {
  compressed: number;
  uncompressed: number;
  localOffset: number;
}

/** Replaces the 32-bit fields marked unknown (0xFFFFFFFF) with their values from the Zip64 extra field. */
function readZip64Sizes(extra: Buffer, sizes: EntrySizes): void {
  for (let at = 0; at + 4 <= extra.length; at += 4 + extra.readUInt16LE(at + 2)) {
    if (extra.readUInt16LE(at) !== 0x0001) continue;
    let field = at + 4;
    for (const key of ["uncompressed", "compressed", "localOffset"] as const) {
      if (sizes[key] !== UNKNOWN_32 || field + 8 > extra.length) continue;
      sizes[key] = Number(extra.readBigUInt64LE(field));
      field += 8;
    }
  }
}

/** Bytes the entry decompresses to, inflating at most up to the part limit or the file budget left. */
function inflatedSize(bytes: Buffer, name: string, method: number, sizes: EntrySizes, budget: number): number {
  const local = sizes.localOffset;
  if (local + 30 > bytes.length || bytes.readUInt32LE(local) !== LOCAL_HEADER) throw new Error(`no local header for ${name}`);
  const dataStart = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
  const limit = Math.min(PACKAGE_LIMITS.partBytes, budget);
  const tooLarge = () =>
    new ParseError(limit === PACKAGE_LIMITS.partBytes
      ? `A part of the file (${name}) decompresses to more than ${PACKAGE_LIMITS.partBytes / MB} MB; ${ZIP_BOMB}`
      : `The file decompresses to more than ${PACKAGE_LIMITS.fileBytes / MB} MB; ${ZIP_BOMB}`);
  if (method === 0) {
    if (sizes.compressed > limit) throw tooLarge();
    return sizes.compressed;
  }
  if (method !== 8) throw new Error(`unsupported compression method ${method} for ${name}`);
  try {
    // Inflation stops at the end of the deflate stream; whatever follows it is not read.
    const size = inflateRawSync(bytes.subarray(dataStart), { maxOutputLength: Math.max(1, limit) }).length;
    if (size > limit) throw tooLarge();
    return size;
  } catch (error) {
    if (error instanceof ParseError) throw error;
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw tooLarge();
    throw new Error(`cannot inflate ${name}`, { cause: error });
  }
}
