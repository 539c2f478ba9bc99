// A part's file name sent as filename*= (RFC 5987's charset'language'percent-encoded form, which RFC 6266
// has recipients prefer to filename=), made the part's filename= before Bun's form parser reads the body.
// That parser reads only the first filename parameter it meets and takes filename*= for none: a part
// with only filename*= (Python's urllib3 1.x for a name outside ASCII), or with it before filename=,
// became a text field and the upload "must be a file"; with filename= first the ASCII fallback was kept.
import { decodeEncodedWords } from "../ingest/encoded-words.ts";
import { checkUploadFile } from "../ingest/upload-rules.ts";

/**
 * What is looked at, far beyond any real form (a part's header block takes a few hundred bytes, an upload one
 * file part): past these a part, or the rest of the body, is left as sent, so that a crafted body cannot hold
 * the HTTP thread (3,000 parts of 5,400 parameters each took 4 s to rewrite, 2.8 million empty parts 0.5 s).
 * A scan finds the delimiters with Buffer.indexOf: a 50 MB upload of one part is read through once, in ~5 ms.
 */
const MAX_PART_HEADER_BYTES = 4 * 1024;
const MAX_PARAMETERS = 32;
const MAX_NAMED_PARTS = 64;
const MAX_PARTS = 1000;
const CRLF_CRLF = Buffer.from("\r\n\r\n");
/** The Content-Disposition line of a part's header block. */
const DISPOSITION_LINE = /^content-disposition[ \t]*:(.*)$/im;
/** One `; name=value` parameter, the value a token or a quoted string. */
const PARAMETER = /;\s*([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g;
/** RFC 5987 ext-value: charset, language (ignored), bytes as visible ASCII or percent-encoded (raw text is none). */
const EXT_VALUE = /^([A-Za-z0-9!#$&+^_`{}~-]+)'[^']*'((?:[!-$&-~]|%[0-9A-Fa-f]{2})*)$/;

/** A parameter's value without the quotes of a quoted string (its escapes kept, as the parser keeps them). */
function unquoted(raw: string): string {
  return raw.replace(/^"(.*)"$/, "$1");
}

/** The text of an RFC 5987 ext-value, or null when it is not one or its bytes are not in its charset. */
function decodeExtValue(value: string): string | null {
  const match = EXT_VALUE.exec(unquoted(value).trim());
  if (!match) return null;
  const [, charset, encoded] = match;
  if (!/^(utf-8|iso-8859-1)$/i.test(charset)) return null; // the two RFC 5987 requires; others are not guessed at
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    if (encoded[i] === "%") bytes.push(parseInt(encoded.slice(i + 1, (i += 2) + 1), 16));
    else bytes.push(encoded.charCodeAt(i));
  }
  try {
    return new TextDecoder(charset, { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    return null;
  }
}

/**
 * The name as a quoted filename= value that sentFileName (upload-rules.ts) reads back as the name: the
 * parser keeps a quoted string's escapes and sentFileName undoes them, so a quote is escaped; a backslash is
 * written as "/" (either is a path separator there, and a backslash before the closing quote misleads the
 * parser); control characters, which the name would lose anyway, are dropped (a NUL ends it in the parser);
 * and "%" is written %25 where the name is percent-decoded (one that holds RFC 2047 encoded words is not).
 */
function quotedName(name: string): string {
  const plain = name.replace(/[\x00-\x1f\x7f]/g, "").replace(/\\/g, "/");
  const percent = decodeEncodedWords(plain) === plain ? plain.replace(/%/g, "%25") : plain;
  return `"${percent.replace(/"/g, '\\"')}"`;
}

/** Whether a part named so is taken as an upload: a name left once cleaned, of a supported type. */
function usable(parsedName: string): boolean {
  try {
    checkUploadFile({ name: parsedName, size: 1 });
    return true;
  } catch {
    return false;
  }
}

/** What the parser takes from a part's Content-Disposition line as sent: its field name, and its filename if any. */
async function parsedDisposition(value: string): Promise<{ name: string; filename: string | null } | null> {
  const probe = Buffer.from(`--p\r\nContent-Disposition:${value}\r\n\r\n\r\n--p--\r\n`, "latin1");
  try {
    const form = await new Response(probe, { headers: { "content-type": "multipart/form-data; boundary=p" } }).formData();
    const [entry] = form.entries();
    return entry ? { name: entry[0], filename: typeof entry[1] === "string" ? null : (entry[1] as File).name } : null;
  } catch {
    return null;
  }
}

/** A quoted value the parser reads back as `text` (it keeps escapes such as \\" as sent), or null where none can be written. */
function quotedAsIs(text: string): string | null {
  return /(^|[^\\])"|[\r\n]|\\$/.test(text) ? null : `"${text}"`;
}

/**
 * The part's Content-Disposition line rewritten as `form-data; name="…"; filename="…"`, or null to leave it.
 * The name is the one the parser takes from the line as sent (which name= that is depends on filename=,
 * filename*= and unquoted values around it, so the parser is asked: parsedDisposition), else the first
 * name=. The filename is filename*='s name, unless that is no ext-value in its charset or names nothing an
 * upload can take (blank, "..", no extension) and the line has another: then the one the parser takes, else
 * the first filename= sent. Other parameters (size=, modification-date=) are dropped: nothing reads them.
 * `value` is the line after its colon, read as Latin-1 (one character a byte).
 */
async function dispositionWithOneName(value: string): Promise<Buffer | null> {
  const parameters = [...value.matchAll(PARAMETER)].map(([, key, raw]) => ({ key: key.toLowerCase(), raw: raw.trim() }));
  const extended = parameters.find(({ key }) => key === "filename*");
  const decoded = extended ? decodeExtValue(extended.raw) : null;
  const parsed = await parsedDisposition(value);
  // Where the parser takes none (an unquoted value came first, as filename*=UTF-8''… itself), the first sent.
  const first = (key: string) => {
    const raw = parameters.find((parameter) => parameter.key === key)?.raw;
    return raw === undefined ? undefined : Buffer.from(unquoted(raw), "latin1").toString();
  };
  const nameAsSent = parsed ? parsed.name : first("name");
  const name = nameAsSent === undefined ? null : quotedAsIs(nameAsSent);
  if (name === null) return null;
  const preferred = decoded === null ? null : quotedName(decoded);
  const filenameAsSent = parsed?.filename || first("filename");
  const asSent = filenameAsSent ? quotedAsIs(filenameAsSent) : null;
  // A filename the line has but that cannot be written again: the line is left as sent.
  const filename = preferred !== null && (filenameAsSent === undefined || usable(preferred.slice(1, -1))) ? preferred : asSent;
  return filename === null ? null : Buffer.from(`Content-Disposition: form-data; name=${name}; filename=${filename}`);
}

/** The first line of a part: a delimiter at the body's start or after CRLF, then CRLF. */
function isPartStart(bytes: Buffer, at: number, delimiterLength: number): boolean {
  if (at > 0 && (bytes[at - 2] !== 0x0d || bytes[at - 1] !== 0x0a)) return false;
  // Right after it: the parser takes no blanks before the CRLF (RFC 2046 allows them) as a delimiter.
  return bytes[at + delimiterLength] === 0x0d && bytes[at + delimiterLength + 1] === 0x0a;
}

/**
 * The multipart body with every part's filename*= rewritten as its filename= (dispositionWithOneName); the
 * same bytes when no part has one. `boundary` is the Content-Type's. Parts are found as Bun's parser finds
 * them (a delimiter line after CRLF), so bytes of a file's content are never taken for a part's header.
 */
export async function withExtendedFileNames(body: Uint8Array, boundary: string): Promise<Uint8Array> {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const delimiter = Buffer.from(`--${boundary}`);
  const edits: { start: number; end: number; line: Buffer }[] = [];
  let [parts, named, next] = [0, 0, 0];
  for (let at = bytes.indexOf(delimiter); at >= 0 && named < MAX_NAMED_PARTS && parts < MAX_PARTS; at = bytes.indexOf(delimiter, next)) {
    next = at + delimiter.length;
    parts++;
    if (isPartStart(bytes, at, delimiter.length)) {
      const headerStart = bytes.indexOf(CRLF_CRLF.subarray(0, 2), next) + 2;
      const headerEnd = bytes.indexOf(CRLF_CRLF, headerStart - 2);
      if (headerEnd < 0) break;
      next = headerEnd + 2; // the part's content starts after the blank line; the next delimiter's CRLF may be its first bytes
      if (headerEnd - headerStart > MAX_PART_HEADER_BYTES) continue;
      const header = bytes.toString("latin1", headerStart, headerEnd); // one character a byte: offsets carry over
      const line = DISPOSITION_LINE.exec(header);
      if (!line || !/filename\*/i.test(line[1])) continue;
      named++;
      if (line[1].split(";").length > MAX_PARAMETERS + 1) continue;
      const rewritten = await dispositionWithOneName(line[1]);
      if (rewritten) edits.push({ start: headerStart + line.index, end: headerStart + line.index + line[0].length, line: rewritten });
    }
  }
  return applyEdits(bytes, edits) ?? body;
}

/**
 * The lines replaced: in place, each padded with blanks to the length of the one it replaces (it is rarely
 * longer: "filename*=UTF-8''" and three bytes a percent-escape go), so that a 50 MB upload is not copied
 * again; into a new body when one is longer. Null when there are none.
 */
function applyEdits(bytes: Buffer, edits: { start: number; end: number; line: Buffer }[]): Buffer | null {
  if (edits.length === 0) return null;
  if (edits.every(({ start, end, line }) => line.length <= end - start)) {
    for (const { start, end, line } of edits) bytes.fill(0x20, start + line.copy(bytes, start), end);
    return bytes;
  }
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const { start, end, line } of edits) {
    pieces.push(bytes.subarray(from, start), line);
    from = end;
  }
  pieces.push(bytes.subarray(from));
  return Buffer.concat(pieces);
}
