// The streams at the top of a Compound File Binary container (MS-CFB: Office 97-2003 files, password-protected
// Office Open XML): those of the file itself, not of the objects embedded in it (a .doc keeps an Excel chart's
// Workbook stream in a storage of its own, a .ppt likewise). Every chain and link is followed with a record of
// where it has been and no further than the file's size allows: a hand-made 2 KB file whose chains loop had
// taken SheetJS's reader to 1.4 GB.

const SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const HEADER_BYTES = 512;
const ENTRY_BYTES = 128;
/** Sector numbers above this are markers (end of chain, free, FAT or DIFAT sector), not sectors. */
const MAX_SECTOR = 0xfffffffa;
const NO_ENTRY = 0xffffffff;
/** Header offsets (MS-CFB 2.2). */
const SECTOR_SHIFT_AT = 0x1e;
const FIRST_DIRECTORY_SECTOR_AT = 0x30;
const FIRST_DIFAT_SECTOR_AT = 0x44;
const HEADER_DIFAT_AT = 0x4c;
const HEADER_DIFAT_ENTRIES = 109;
/** Directory entry offsets (MS-CFB 2.6); the name, UTF-16 up to a NUL, fills the entry's first 64 bytes. */
const NAME_BYTES = 0x40;
const TYPE_AT = 0x42;
const LEFT_AT = 0x44;
const RIGHT_AT = 0x48;
const CHILD_AT = 0x4c;
const STREAM = 2;

function isCompoundFile(data: Uint8Array): boolean {
  return SIGNATURE.every((byte, i) => data[i] === byte);
}

/** A chain of sectors from `first`, each one's successor by `next`, ending at a marker, a repeat or the file's end. */
function chain(first: number, sectors: number, next: (sector: number) => number): number[] {
  const seen = new Set<number>();
  for (let sector = first; sector <= MAX_SECTOR && sector < sectors && !seen.has(sector); sector = next(sector)) seen.add(sector);
  return [...seen];
}

/** The names of the streams directly under the container's root; empty for anything else, or when its structure cannot be read. */
export function topLevelStreams(data: Uint8Array): string[] {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (bytes.length < HEADER_BYTES || !isCompoundFile(bytes)) return [];
  const shift = bytes.readUInt16LE(SECTOR_SHIFT_AT);
  if (shift !== 9 && shift !== 12) return [];
  const size = 1 << shift;
  const sectors = Math.floor(bytes.length / size) - 1; // sector n starts at (n + 1) · size
  const word = (sector: number, index: number) => bytes.readUInt32LE((sector + 1) * size + 4 * index);
  const perSector = size / 4;

  // The FAT's sectors: listed in the header, then in a chain of DIFAT sectors whose last word links the next;
  // no more than the file's sectors need (a chain run through every sector had listed 12 million).
  const fatSectors: number[] = [];
  for (let i = 0; i < HEADER_DIFAT_ENTRIES; i++) fatSectors.push(bytes.readUInt32LE(HEADER_DIFAT_AT + 4 * i));
  const fatSectorsNeeded = Math.ceil(sectors / perSector);
  for (const difat of chain(bytes.readUInt32LE(FIRST_DIFAT_SECTOR_AT), sectors, (sector) => word(sector, perSector - 1))) {
    if (fatSectors.length >= fatSectorsNeeded) break;
    for (let i = 0; i < perSector - 1; i++) fatSectors.push(word(difat, i));
  }
  const next = (sector: number) => {
    const fatSector = fatSectors[Math.floor(sector / perSector)];
    return fatSector !== undefined && fatSector <= MAX_SECTOR && fatSector < sectors ? word(fatSector, sector % perSector) : NO_ENTRY;
  };

  const directory = chain(bytes.readUInt32LE(FIRST_DIRECTORY_SECTOR_AT), sectors, next);
  const entriesPerSector = size / ENTRY_BYTES;
  const entryAt = (id: number) => (directory[Math.floor(id / entriesPerSector)] + 1) * size + (id % entriesPerSector) * ENTRY_BYTES;
  const entryCount = directory.length * entriesPerSector;
  if (entryCount === 0) return [];

  // The root's children form a tree of siblings (left and right links) from its child link.
  const streams: string[] = [];
  const seen = new Set<number>();
  const pending = [bytes.readUInt32LE(entryAt(0) + CHILD_AT)];
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (id >= entryCount || seen.has(id)) continue;
    seen.add(id);
    const at = entryAt(id);
    // Up to its NUL: a writer that counted the padding, or an odd length, still names the stream.
    const name = bytes.toString("utf16le", at, at + NAME_BYTES).split("\0")[0];
    if (bytes[at + TYPE_AT] === STREAM && name !== "") streams.push(name);
    pending.push(bytes.readUInt32LE(at + LEFT_AT), bytes.readUInt32LE(at + RIGHT_AT));
  }
  return streams;
}
