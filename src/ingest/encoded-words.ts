// The encodings clients put an uploaded file's name in, undone. RFC 2047 encoded words: .NET's
// MultipartFormDataContent (HttpClient) sends a name outside ASCII as filename="=?utf-8?B?csOpc3Vtw6kudHh0?="
// beside filename*=, which Bun's form parser does not read: the document would be named by the encoding.
// Percent-encoding (RFC 7578 §4.2 allows it): Python's aiohttp sends "my report.md" as "my%20report.md".
// Nobody names a file like either on purpose.

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;
/** Whitespace between two encoded words is not part of the text (RFC 2047 §6.2). */
const BETWEEN_WORDS = /(\?=)\s+(?==\?)/g;

function decodeWord(charset: string, encoding: string, text: string): string | null {
  let bytes: Uint8Array;
  if (encoding.toUpperCase() === "B") {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
    bytes = Buffer.from(text, "base64");
  } else {
    // Q: "_" is a space, "=XX" a byte in hex, any other printable ASCII character itself.
    if (!/^(?:[!-<>@-~]|=[0-9A-Fa-f]{2})*$/.test(text)) return null; // "=" only before two hex digits
    const values: number[] = [];
    for (let i = 0; i < text.length; i++) {
      if (text[i] === "=") values.push(parseInt(text.slice(i + 1, (i += 2) + 1), 16));
      else values.push(text[i] === "_" ? 0x20 : text.charCodeAt(i));
    }
    bytes = Uint8Array.from(values);
  }
  try {
    return new TextDecoder(charset, { fatal: true }).decode(bytes);
  } catch {
    return null; // an unknown charset or bytes that are not in it: left as sent
  }
}

/** The name with its encoded words decoded; one that cannot be decoded is kept as sent. */
export function decodeEncodedWords(name: string): string {
  if (!name.includes("=?")) return name;
  return name.replace(BETWEEN_WORDS, "$1").replace(ENCODED_WORD, (word, charset: string, encoding: string, text: string) => decodeWord(charset, encoding, text) ?? word);
}

/**
 * The name with its percent-escapes decoded, when every "%" in it starts one and they spell UTF-8; otherwise
 * as sent ("100%.md", "50%off.txt" are names, not encodings).
 */
export function decodePercentEscapes(name: string): string {
  if (!/%[0-9A-Fa-f]{2}/.test(name)) return name;
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}
