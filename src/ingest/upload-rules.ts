// What an upload must satisfy before it is stored (spec 8.2): a supported extension, at most 50 MB, a
// usable name, metadata that is a JSON object. Each failure is a VALIDATION_ERROR naming the field.
import { invalid, validationError } from "../errors.ts";
import { METADATA_LIMITS, metadataIssues } from "../store/metadata-limits.ts";
import { SUPPORTED_TYPES, isSupportedType, type SupportedType } from "./parsers/index.ts";
import { characterCount, wellFormedValueOf } from "../characters.ts";
import { decodeEncodedWords, decodePercentEscapes } from "./encoded-words.ts";

export const MAX_FILE_BYTES = 50 * 1024 * 1024;
export const MAX_NAME_LENGTH = 256;
/** Longest raw text (POST …/documents/text), in UTF-16 code units (a JavaScript string's length). */
export const MAX_TEXT_LENGTH = 10_000_000;

function cleanName(raw: string): string {
  return raw
    .normalize("NFC")
    .replace(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/g, "")
    .trim();
}

/**
 * The name shown for a document, as the client sent it but without control characters, nor the
 * bidirectional overrides and isolates that make a name read otherwise than it is ("\u202Etxt.exe.txt"
 * shows as "txt.exe.txt" reversed). Raw text's name is taken whole ("Q3/Q4 summary"); an uploaded file's
 * is its last path segment (uploadName). The stored file gets a stricter name (store/files.ts sanitizeFileName).
 */
export function documentName(raw: string, field: string, whenEmpty = "must not be empty", subject = ""): string {
  const name = cleanName(raw);
  if (name === "") throw invalid([field], whenEmpty);
  const length = characterCount(name);
  if (length > MAX_NAME_LENGTH) throw invalid([field], `${subject}must be at most ${MAX_NAME_LENGTH} characters (this one has ${length})`);
  return name;
}

/**
 * An uploaded file's name: browsers and tools may send a path ("C:\\Users\\me\\report.pdf"); the file name is
 * its last segment. Bun's form parser keeps a quoted string's escapes (Go's mime/multipart and curl before
 * 7.81 send quo"te.txt as "quo\\"te.txt"), undone here; .NET sends a name outside ASCII as RFC 2047 encoded
 * words, aiohttp (and browsers, for a quote) percent-encoded, either decoded here (not both: a name that came
 * as encoded words is the name, "%20" and all).
 */
export function sentFileName(raw: string): string {
  const unescaped = raw.replace(/\\(["\\])/g, "$1");
  const decoded = decodeEncodedWords(unescaped);
  return cleanName((decoded !== unescaped ? decoded : decodePercentEscapes(unescaped)).split(/[\\/]/).pop()!);
}

function uploadName(raw: string): string {
  return documentName(sentFileName(raw), "file", "must contain a file name", "its name ");
}

export interface CheckedUpload {
  name: string;
  fileType: SupportedType;
  size: number;
}

/** The lowercased extension is the document's file_type. */
export function checkUploadFile(file: { name?: string; size: number }): CheckedUpload {
  // A multipart part sent with an empty filename arrives without a name.
  const name = uploadName(file.name ?? "");
  const extension = /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase();
  if (!extension || !isSupportedType(extension)) {
    throw invalid(
      ["file"],
      `${extension ? `has an unsupported type ".${extension}"` : `"${name}" has no file extension`}; supported: ${SUPPORTED_TYPES.join(", ")}`,
    );
  }
  if (file.size === 0) throw invalid(["file"], "is empty");
  if (file.size > MAX_FILE_BYTES) {
    throw invalid(["file"], `is too large: ${file.size} bytes; the maximum is ${MAX_FILE_BYTES} bytes (50 MB)`);
  }
  return { name, fileType: extension, size: file.size };
}

/**
 * The multipart `metadata` field, from its parts as sent (a text, or a file holding the text): one JSON object,
 * or absent.
 */
export async function parseMetadataField(parts: readonly (string | Blob)[]): Promise<Record<string, unknown> | undefined> {
  if (parts.length === 0) return undefined;
  if (parts.length > 1) {
    const both = parts.some((part) => typeof part === "string") && parts.some((part) => typeof part !== "string");
    throw invalid(["metadata"], `must be one JSON object such as {"team":"support"}, sent once; it came ${both ? "both as text and as a file" : `${parts.length} times`}`);
  }
  const [part] = parts;
  const json = typeof part === "string" ? part : await part!.text();
  // Far past any valid metadata however it is written (escapes, indentation), and as a JSON body's cap.
  if (json.length > MAX_METADATA_TEXT) throw invalid(["metadata"], `must be at most ${METADATA_LIMITS.bytes} bytes as JSON (this one is larger)`);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw invalid(["metadata"], 'is not valid JSON; send a JSON object such as {"team":"support"}');
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    throw invalid(["metadata"], `must be a JSON object such as {"team":"support"}, not ${kind}`);
  }
  const issues = metadataIssues(value).map((issue) => ({ ...issue, path: ["metadata", ...issue.path] }));
  if (issues.length > 0) throw validationError(issues, `${issues[0].path.join(".")}: ${issues[0].message}`);
  return wellFormedValueOf(json, value as Record<string, unknown>);
}

/** Characters of the metadata field's text read at most. */
const MAX_METADATA_TEXT = 1024 * 1024;
