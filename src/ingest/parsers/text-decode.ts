// Bytes → string for the text formats: UTF-8 (BOM stripped), UTF-16 when a BOM says so,
// otherwise Windows-1252/latin1 for files that are not valid UTF-8.

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export function decodeText(data: Uint8Array): string {
  if (data[0] === 0xff && data[1] === 0xfe) return new TextDecoder("utf-16le").decode(data);
  if (data[0] === 0xfe && data[1] === 0xff) return new TextDecoder("utf-16be").decode(data);
  try {
    return utf8.decode(data);
  } catch {
    return new TextDecoder("latin1").decode(data);
  }
}
