// Bytes → string for the text formats: UTF-8 (BOM stripped), UTF-16 when a BOM says so or its NUL bytes
// show it (plain text in UTF-16 has one in every other byte), otherwise the file's declared legacy encoding
// (an HTML page's <meta charset>) or Windows-1252/latin1 for files that are not UTF-8. A file that is UTF-8
// but for a few stray bytes (a truncated character, one line pasted from elsewhere) stays UTF-8, those bytes
// becoming U+FFFD: read as latin1, every accented letter of it would turn into two wrong ones ("café" → "cafÃ©").
// A file with a NUL byte near its start is binary data under a text extension, and fails.
import { ParseError } from "./types.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const lossyUtf8 = new TextDecoder("utf-8", { ignoreBOM: false });

const REPLACEMENT = 0xfffd;

/** Bytes looked at for a NUL, the mark of a binary file (as git decides). */
const BINARY_PROBE_BYTES = 8000;

/**
 * `legacyEncoding`: a TextDecoder label for a file that is not UTF-8 (what the file declares, when its
 * format has a way to); latin1 (read as Windows-1252) when none is known.
 */
export function decodeText(data: Uint8Array, legacyEncoding = "latin1"): string {
  if (data[0] === 0xff && data[1] === 0xfe) return new TextDecoder("utf-16le").decode(data);
  if (data[0] === 0xfe && data[1] === 0xff) return new TextDecoder("utf-16be").decode(data);
  const probe = data.subarray(0, BINARY_PROBE_BYTES);
  if (probe.includes(0)) {
    const utf16 = utf16ByNuls(probe);
    if (utf16) return new TextDecoder(utf16).decode(data);
    throw new ParseError("This file holds binary data, not text: upload it with the extension of its real type");
  }
  try {
    return utf8.decode(data);
  } catch {
    const text = lossyUtf8.decode(data);
    return mostlyUtf8(text) ? text : new TextDecoder(legacyEncoding).decode(data);
  }
}

/**
 * UTF-16 without a BOM, told by where its NUL bytes are: Latin-script text has one in every other byte,
 * always at odd offsets (little-endian) or always at even ones (big-endian). Binary data has them at both.
 */
function utf16ByNuls(probe: Uint8Array): "utf-16le" | "utf-16be" | null {
  let even = 0;
  let odd = 0;
  for (let i = 0; i < probe.length; i++) if (probe[i] === 0) i % 2 === 0 ? even++ : odd++;
  const pairs = Math.floor(probe.length / 2);
  if (even === 0 && odd >= pairs * 0.4) return "utf-16le";
  if (odd === 0 && even >= pairs * 0.4) return "utf-16be";
  return null;
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
