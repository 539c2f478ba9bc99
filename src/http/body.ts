// Request bodies: a size cap checked before anything is read, and JSON parsing that answers malformed
// JSON or a non-JSON content type with VALIDATION_ERROR. Multipart bodies are taken only by the routes
// that declare `parse: MULTIPART` (the uploads); every other route refuses them like any non-JSON type.
import { Elysia } from "elysia";
import { invalid, validationError, type QuarryError } from "../errors.ts";
import { requestState } from "./request-state.ts";
import { MAX_TEXT_LENGTH } from "../ingest/upload-rules.ts";
import { requestPath } from "./request-path.ts";
import { withExtendedFileNames } from "./form-file-names.ts";
import { cutToLength, parseWellFormedJson } from "../characters.ts";

/** 50 MB of file plus room for multipart framing and form fields (the uploads). */
export const MAX_BODY_BYTES = 51 * 1024 * 1024;

/**
 * Any other JSON body on /v1 (search, knowledge bases, metadata): the largest valid one, a search with two
 * 10,000-character queries and a 16 KB filter written in \u escapes, takes about 150 KB. At the uploads' 51 MB
 * a body of 3.5 million keys took 2.3 s to parse, stalling every other tenant meanwhile.
 */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** Webhooks verify a signature over the exact bytes sent, so their routes read the raw body themselves. */
export const RAW_BODY_PREFIX = "/api/webhooks/";

/**
 * Routes that take no API key read their body before anyone is known, so they take only small ones:
 * signup and login a few fields, the payment provider's events a few kilobytes.
 */
export const UNAUTHENTICATED_BODY_LIMITS: [prefix: string, maxBytes: number][] = [
  ["/api/auth/", 64 * 1024],
  [RAW_BODY_PREFIX, 256 * 1024],
];

/** Whether the request sends a body (declared by length or chunked). */
export function hasBody(request: Request): boolean {
  return request.headers.has("transfer-encoding") || Number(request.headers.get("content-length") ?? 0) > 0;
}

/**
 * Raw text takes MAX_TEXT_LENGTH characters written as JSON escapes (\\uXXXX: 6 bytes each, as clients
 * that escape all non-ASCII send them), with room for the name and metadata. That holds any text of the
 * Basic Multilingual Plane; a character beyond it (an emoji) takes two escapes, 12 bytes, or 4 as UTF-8.
 */
export const MAX_TEXT_BODY_BYTES = 6 * MAX_TEXT_LENGTH + 1024 * 1024;
// The router takes a path with a trailing slash as the same route: so do these.
const TEXT_ROUTE = /^\/api\/v1\/knowledge-bases\/[^/]+\/documents\/text\/?$/;
/** The uploads (POST …/documents, PUT …/documents/{doc_id}): their cap is a file's 50 MB and its form. */
const FILE_ROUTE = /^\/api\/v1\/knowledge-bases\/[^/]+\/documents(?:\/[^/]+)?\/?$/;

/** Whether the request goes to an upload or a replacement, which take a multipart form. */
function takesFile(request: Request): boolean {
  const path = requestPath(request);
  return (request.method === "POST" || request.method === "PUT") && FILE_ROUTE.test(path) && !TEXT_ROUTE.test(path);
}

export function maxBodyBytes(request: Request): number {
  const path = requestPath(request);
  if (TEXT_ROUTE.test(path)) return MAX_TEXT_BODY_BYTES;
  const unauthenticated = UNAUTHENTICATED_BODY_LIMITS.find(([prefix]) => path.startsWith(prefix));
  if (unauthenticated) return unauthenticated[1];
  return takesFile(request) ? MAX_BODY_BYTES : MAX_JSON_BODY_BYTES;
}

function tooLarge(size: string, max: number): QuarryError {
  const room = max === MAX_TEXT_BODY_BYTES ? ` (${MAX_TEXT_LENGTH} characters of text)` : max === MAX_BODY_BYTES ? " (50 MB per file)" : "";
  return invalid(["body"], `is too large: ${size} bytes; the maximum is ${max} bytes${room}`);
}

/** JSON text from its bytes: UTF-8, as RFC 8259 has it (other bytes were stored as U+FFFD: Latin-1 "café" as "caf\uFFFD"). */
function jsonText(bytes: Uint8Array): string | QuarryError {
  try {
    return utf8.decode(bytes);
  } catch {
    return validationError([{ path: [], message: "is not valid UTF-8" }], "Request body is not valid UTF-8: JSON is sent as UTF-8");
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The body's bytes as sent; one sent without a Content-Length (chunked) is cut off at `max` bytes, and one
 * sent compressed is not read (encodedBodyError).
 */
export async function readBytes(request: Request, max: number): Promise<Uint8Array | QuarryError> {
  const encoded = encodedBodyError(request);
  if (encoded) return encoded;
  if (request.headers.has("content-length") || !request.body) return new Uint8Array(await request.arrayBuffer()); // length checked in onRequest
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > max) {
      void reader.cancel();
      return tooLarge(`more than ${max}`, max);
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks);
}

/**
 * application/json, with parameters (charset) or none. Other JSON-based types are not taken as it: a
 * JSON Patch (application/json-patch+json) is a list of operations, not the fields to set.
 */
function isJson(contentType: string): boolean {
  return /^application\/json\s*(;|$)/i.test(contentType);
}

function isMultipart(contentType: string): boolean {
  return /^multipart\/form-data/i.test(contentType);
}

/** The message of routes other than the uploads: the parser runs before the route is matched. */
const CONTENT_TYPE_RULE = "must be application/json, or multipart/form-data for document uploads and replacements";

function unsupportedContentType(contentType: string): QuarryError {
  return validationError(
    [{ path: ["headers", "content-type"], message: CONTENT_TYPE_RULE }],
    `Unsupported Content-Type "${contentType || "(none)"}": send JSON with Content-Type: application/json (document uploads and replacements: multipart/form-data)`,
  );
}

/**
 * Route option (`parse: MULTIPART`) of the routes that take multipart/form-data. The global parser below
 * runs first and marks a multipart body as unsupported; this clears the mark and reads the body (one sent
 * chunked is cut off at MAX_BODY_BYTES), with names sent as filename*= made the parts' filename=
 * (form-file-names.ts); then Elysia reads the form from those bytes.
 */
export const MULTIPART: [({ request }: { request: Request }) => Promise<undefined>, "formdata"] = [
  async ({ request }) => {
    const state = requestState(request);
    state.bodyError = undefined;
    const contentType = request.headers.get("content-type") ?? "";
    const bytes = await readBytes(request, MAX_BODY_BYTES);
    let form: () => Promise<FormData>;
    if (bytes instanceof Uint8Array) {
      const boundary = /;\s*boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(contentType);
      const body = boundary ? await withExtendedFileNames(bytes, boundary[1] ?? boundary[2]) : bytes;
      form = async () => (state.form = await new Response(body as Uint8Array<ArrayBuffer>, { headers: { "content-type": contentType } }).formData());
    } else {
      state.bodyError = bytes; // thrown once the credential is checked (auth.ts)
      form = async () => new FormData();
    }
    // Elysia's form parser calls request.formData(), which can no longer read the body: it is given this form.
    Object.defineProperty(request, "formData", { value: form });
    return undefined;
  },
  "formdata",
];

/**
 * Route option (`transform: requireMultipart`) of the same routes: a JSON or other body there is reported as
 * the wrong Content-Type, not as a form without its file. Runs after the credential check (401 first).
 */
export function requireMultipart({ request }: { request: Request }): void {
  const contentType = request.headers.get("content-type") ?? "";
  if (hasBody(request) && !isMultipart(contentType)) throw notMultipart(contentType);
}

/** An upload or replacement sent as anything but a form (JSON, the file's own bytes, urlencoded). */
function notMultipart(contentType: string): QuarryError {
  return validationError(
    [{ path: ["headers", "content-type"], message: "must be multipart/form-data" }],
    `Unsupported Content-Type "${contentType || "(none)"}": this endpoint takes multipart/form-data, the document in a part named file (metadata, optional, a JSON string)`,
  );
}

/**
 * Deepest nesting of arrays and objects a JSON body may have: far beyond any valid request (metadata
 * nests at most 5 levels) and far below what recursive validation and error reporting cope with (a body
 * 100,000 levels deep overflowed the stack after 30 s of blocking the server).
 */
export const MAX_JSON_DEPTH = 256;

/**
 * Object keys and values a JSON body may hold in all: parsing is the HTTP thread's, and its time grows with
 * them (100,000 distinct keys took 39 ms, 3.5 million 2.3 s). The largest valid bodies hold far fewer: 32 KB
 * of metadata has at most ~5,500 keys, a filter 32 lists of 1,000 values.
 */
export const MAX_JSON_KEYS = 10_000;
export const MAX_JSON_VALUES = 100_000;

/** What makes the JSON text too costly to parse (see above), or null; one pass, strings skipped. */
function jsonShapeProblem(text: string): string | null {
  let depth = 0;
  let keys = 0;
  let separators = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`;
    } else if (c === 0x5d || c === 0x7d) depth--;
    else if (c === 0x3a) {
      if (++keys > MAX_JSON_KEYS) return `holds more than ${MAX_JSON_KEYS} object keys`;
    } else if (c === 0x2c && ++separators >= MAX_JSON_VALUES) return `holds more than ${MAX_JSON_VALUES} values`;
  }
  return null;
}

/**
 * A body read that was sent compressed (Content-Encoding: gzip, br, …): refused, as RFC 9110 lets a server do
 * with a coding it does not take. Read as it came, gzip was reported as JSON that is not UTF-8, and an unknown
 * coding on a plain body was ignored. A body that is not read (a GET's) is not judged by it either.
 */
function encodedBodyError(request: Request): QuarryError | null {
  const coding = request.headers.get("content-encoding")?.trim() ?? "";
  if (!hasBody(request) || coding.split(",").every((part) => ["", "identity"].includes(part.trim().toLowerCase()))) return null;
  return validationError(
    [{ path: ["headers", "content-encoding"], message: "is not supported: send the body uncompressed" }],
    `Unsupported Content-Encoding "${cutToLength(coding, 64)}": send the body uncompressed, without a Content-Encoding header`,
  );
}

export const bodyHandling = new Elysia({ name: "quarry-body" })
  .onRequest(({ request }) => {
    const declared = request.headers.get("content-length") ?? "0";
    const max = maxBodyBytes(request);
    if (Number(declared) > max) throw tooLarge(declared, max); // as sent: past 2^53 a Number rounds it
  })
  // Errors thrown while parsing would be reported by Elysia as a generic parse failure, so the precise
  // error is remembered here and thrown in onTransform, before the body is validated.
  .onParse({ as: "global" }, async ({ request }) => {
    const path = requestPath(request);
    if (path.startsWith(RAW_BODY_PREFIX)) return; // their route-level parser reads the exact raw body
    const contentType = request.headers.get("content-type") ?? "";
    const failure = (error: QuarryError) => {
      requestState(request).bodyError = error;
      return null;
    };
    if (isMultipart(contentType)) {
      // Not read at all where no file is taken: Elysia's own form parser would read a chunked body whole.
      if (!takesFile(request)) return failure(unsupportedContentType(contentType));
      requestState(request).bodyError = unsupportedContentType(contentType); // unless the route takes MULTIPART
      return; // not parsed here: the route's MULTIPART option reads the form
    }
    const bytes = await readBytes(request, maxBodyBytes(request));
    if (!(bytes instanceof Uint8Array)) return failure(bytes);
    if (bytes.length === 0) return null;
    // No Content-Type at all is read as JSON, the wire format (Python's requests sends none with data=json.dumps(…));
    // a type the client did name is taken at its word.
    const file = takesFile(request);
    if (!isJson(contentType) && (contentType !== "" || file)) return failure(file ? notMultipart(contentType) : unsupportedContentType(contentType));
    const text = jsonText(bytes);
    if (typeof text !== "string") return failure(text);
    const problem = jsonShapeProblem(text);
    if (problem) return failure(validationError([{ path: [], message: problem }], `Request body ${problem}`));
    try {
      return parseWellFormedJson(text);
    } catch {
      return failure(validationError([{ path: [], message: "is not valid JSON" }], "Request body is not valid JSON"));
    }
  })
  .onTransform({ as: "global" }, ({ request }) => {
    const path = requestPath(request);
    if (path.startsWith(AUTHENTICATED_PREFIX) || path === BEARER_AUTH_ROUTE) return; // raised once the credential is checked
    throwBodyError(request);
  });

/** Every route under this prefix authenticates: a missing credential is answered (401) before a bad body. */
const AUTHENTICATED_PREFIX = "/api/v1/";
/** The one /auth route that takes a bearer credential (routes/auth.ts): likewise. */
export const BEARER_AUTH_ROUTE = "/api/auth/api-key/regenerate";

/** Throws the error met while reading the body, if any (before the body is validated). */
export function throwBodyError(request: Request): void {
  const error = requestState(request).bodyError;
  if (error) throw error;
}
