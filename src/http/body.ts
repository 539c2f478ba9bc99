// Request bodies: a size cap checked before anything is read, and JSON parsing that answers malformed
// JSON or a non-JSON content type with VALIDATION_ERROR. Multipart bodies are taken only by the routes
// that declare `parse: MULTIPART` (the uploads); every other route refuses them like any non-JSON type.
import { Elysia } from "elysia";
import { invalid, validationError, type QuarryError } from "../errors.ts";
import { requestState } from "./request-state.ts";
import { MAX_TEXT_LENGTH } from "../ingest/upload-rules.ts";
import { requestPath } from "./request-path.ts";

/** 50 MB of file plus room for multipart framing and form fields. */
export const MAX_BODY_BYTES = 51 * 1024 * 1024;

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
const TEXT_ROUTE = /^\/api\/v1\/knowledge-bases\/[^/]+\/documents\/text$/;

export function maxBodyBytes(path: string): number {
  if (TEXT_ROUTE.test(path)) return MAX_TEXT_BODY_BYTES;
  return UNAUTHENTICATED_BODY_LIMITS.find(([prefix]) => path.startsWith(prefix))?.[1] ?? MAX_BODY_BYTES;
}

/** The uploads (POST …/documents, PUT …/documents/{doc_id}): their cap is a file's 50 MB and its form. */
const FILE_ROUTE = /^\/api\/v1\/knowledge-bases\/[^/]+\/documents(?:\/[^/]+)?$/;

function tooLarge(size: string, max: number, request: Request): QuarryError {
  const takesFile = (request.method === "POST" || request.method === "PUT") && FILE_ROUTE.test(requestPath(request));
  const room = max === MAX_TEXT_BODY_BYTES ? ` (${MAX_TEXT_LENGTH} characters of text)` : max === MAX_BODY_BYTES && takesFile ? " (50 MB per file)" : "";
  return invalid(["body"], `is too large: ${size} bytes; the maximum is ${max} bytes${room}`);
}

/** The body as text; one sent without a Content-Length (chunked) is cut off at `max` bytes. */
export async function readText(request: Request, max: number): Promise<string | QuarryError> {
  const bytes = await readBytes(request, max);
  return bytes instanceof Uint8Array ? new TextDecoder().decode(bytes) : bytes;
}

/** The body's bytes as sent; one sent without a Content-Length (chunked) is cut off at `max` bytes. */
export async function readBytes(request: Request, max: number): Promise<Uint8Array | QuarryError> {
  if (request.headers.has("content-length") || !request.body) return new Uint8Array(await request.arrayBuffer()); // length checked in onRequest
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > max) {
      void reader.cancel();
      return tooLarge(`more than ${max}`, max, request);
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

/** One message for every route: the parser runs before the route is known to take multipart or JSON. */
const CONTENT_TYPE_RULE = "must be application/json, or multipart/form-data for document uploads and replacements";

function unsupportedContentType(contentType: string): QuarryError {
  return validationError(
    [{ path: ["headers", "content-type"], message: CONTENT_TYPE_RULE }],
    `Unsupported Content-Type "${contentType || "(none)"}": send JSON with Content-Type: application/json (document uploads and replacements: multipart/form-data)`,
  );
}

/**
 * Route option (`parse: MULTIPART`) of the routes that take multipart/form-data. The global parser below
 * runs first and marks a multipart body as unsupported; this clears the mark, then Elysia reads the form.
 */
export const MULTIPART: [({ request }: { request: Request }) => undefined, "formdata"] = [
  ({ request }) => {
    requestState(request).bodyError = undefined;
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
  if (hasBody(request) && !isMultipart(contentType)) {
    throw validationError(
      [{ path: ["headers", "content-type"], message: "must be multipart/form-data" }],
      `Unsupported Content-Type "${contentType || "(none)"}": this endpoint takes multipart/form-data, the document in a part named file (metadata, optional, a JSON string)`,
    );
  }
}

/**
 * Deepest nesting of arrays and objects a JSON body may have: far beyond any valid request (metadata
 * nests at most 5 levels) and far below what recursive validation and error reporting cope with (a body
 * 100,000 levels deep overflowed the stack after 30 s of blocking the server).
 */
export const MAX_JSON_DEPTH = 256;

/** Whether the JSON text opens more than `max` arrays/objects at once; one pass, strings skipped. */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export const bodyHandling = new Elysia({ name: "quarry-body" })
  .onRequest(({ request }) => {
    const length = Number(request.headers.get("content-length") ?? 0);
    const max = maxBodyBytes(requestPath(request));
    if (length > max) throw tooLarge(String(length), max, request);
  })
  // Errors thrown while parsing would be reported by Elysia as a generic parse failure, so the precise
  // error is remembered here and thrown in onTransform, before the body is validated.
  .onParse({ as: "global" }, async ({ request }) => {
    const path = requestPath(request);
    if (path.startsWith(RAW_BODY_PREFIX)) return; // their route-level parser reads the exact raw body
    const contentType = request.headers.get("content-type") ?? "";
    if (isMultipart(contentType)) {
      requestState(request).bodyError = unsupportedContentType(contentType); // unless the route takes MULTIPART
      return; // not parsed here: the route's MULTIPART option (or Elysia's default parser) reads the form
    }
    const failure = (error: QuarryError) => {
      requestState(request).bodyError = error;
      return null;
    };
    const text = await readText(request, maxBodyBytes(path));
    if (typeof text !== "string") return failure(text);
    if (text.length === 0) return null;
    if (!isJson(contentType)) return failure(unsupportedContentType(contentType));
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      return failure(
        validationError([{ path: [], message: `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep` }], "Request body is nested too deeply"),
      );
    }
    try {
      return JSON.parse(text);
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
