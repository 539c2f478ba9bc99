// Bytes → string for the text formats: UTF-8 (BOM stripped), UTF-16 when a BOM says so, otherwise
// Windows-1252/latin1 for files that are not UTF-8. A file that is UTF-8 but for a few stray bytes
// (a truncated character, one line pasted from elsewhere) stays UTF-8, those bytes becoming U+FFFD:
// read as latin1, every accented letter of it would turn into two wrong ones ("café" → "cafÃ©").
// A file with a NUL byte near its start is binary data under a text extension, and fails.
import { ParseError } from "./types.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const lossyUtf8 = new TextDecoder("utf-8", { ignoreBOM: false });

const REPLACEMENT = 0xfffd;

/** Bytes looked at for a NUL, the mark of a binary file (as git decides). */
const BINARY_PROBE_BYTES = 8000;

export function decodeText(data: Uint8Array): string {
  if (data[0] === 0xff && data[1] === 0xfe) return new TextDecoder("utf-16le").decode(data);
  if (data[0] === 0xfe && data[1] === 0xff) return new TextDecoder("utf-16be").decode(data);
  if (data.subarray(0, BINARY_PROBE_BYTES).includes(0)) {
    throw new ParseError("This file holds binary data, not text: upload it with the extension of its real type");
  }
  try {
    return utf8.decode(data);
  } catch {
    const text = lossyUtf8.decode(data);
    return mostlyUtf8(text) ? text : new TextDecoder("latin1").decode(data);
  }
}

/** Whether the valid multi-byte characters outnumber the invalid bytes (each decoded as U+FFFD). */
function mostlyUtf8(text: string): boolean {
  let valid = 0;
  let invalid = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code === REPLACEMENT) invalid++;
    else valid++;
  }
  return valid > invalid;
}
