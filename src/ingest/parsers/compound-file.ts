// Which named streams a Compound File Binary container (MS-CFB: Office 97-2003 files, password-protected
// Office Open XML) holds. Its directory is read by scanning, not by following the container's sector chains:
// directory entries are 128 bytes at 128-byte boundaries past the 512-byte header, whatever the sector size,
// and a scan of the file once cannot be sent round a chain that loops. (SheetJS's reader followed such a
// loop in a 2 KB file until it had taken 1.4 GB.)

const COMPOUND_FILE_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

const HEADER_BYTES = 512;
const ENTRY_BYTES = 128;
/** Offsets in an entry: the name's length in bytes (its NUL included), then the entry's type. */
const NAME_LENGTH_AT = 0x40;
const TYPE_AT = 0x42;
const STREAM = 2;

export function isCompoundFile(data: Uint8Array): boolean {
  return COMPOUND_FILE_SIGNATURE.every((byte, i) => data[i] === byte);
}

/**
 * Those of `names` that the container holds a stream of, in the order their first entries come. (A file's own
 * streams come before those of the objects embedded in it: an .xls holding a Word object lists Workbook first.)
 */
export function compoundFileStreams(data: Uint8Array, names: string[]): string[] {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const wanted = names.map((name) => ({ name, encoded: Buffer.from(`${name}\0`, "utf16le") }));
  const found: string[] = [];
  for (let at = HEADER_BYTES; at + ENTRY_BYTES <= bytes.length; at += ENTRY_BYTES) {
    if (bytes[at + TYPE_AT] !== STREAM) continue;
    const nameLength = bytes.readUInt16LE(at + NAME_LENGTH_AT);
    for (const { name, encoded } of wanted) {
      if (nameLength === encoded.length && !found.includes(name) && bytes.compare(encoded, 0, encoded.length, at, at + encoded.length) === 0) found.push(name);
    }
  }
  return found;
}
