// Maps every failure to the {error:{code,message,details}} envelope with the right HTTP status.
// Unknown errors become INTERNAL_ERROR: logged with the request id, never shown to the client.
import { Elysia } from "elysia";
import { QuarryError, validationError } from "../errors.ts";
import { requestState } from "./request-state.ts";
import { summarize, toIssues } from "./validation.ts";
import { requestPath } from "./request-path.ts";
import { hasBody } from "./body.ts";
import { isOutOfSpace } from "../file-errors.ts";

export function errorBody(error: QuarryError) {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    },
  };
}

interface ElysiaValidationError {
  type: string;
  value: unknown;
  validator?: { schema?: { safeParse?: (v: unknown) => { success: boolean; error?: { issues: never[] } } } };
  all?: { path?: string; message?: string }[];
}

/**
 * A JSON route sent no body at all (an empty body reads as null): said so, rather than "must be a JSON
 * object, not null" about a null never sent. A route's own message for the whole body (the uploads') stays.
 */
const JSON_OBJECT_NOT_NULL = "must be a JSON object, not null";
function bodyMissing(error: ElysiaValidationError, request: Request) {
  return <T extends { path: PropertyKey[]; message: string }>(issue: T): T =>
    error.type === "body" && !hasBody(request) && issue.path.length === 0 && issue.message === JSON_OBJECT_NOT_NULL
      ? { ...issue, message: "is empty: send a JSON object" }
      : issue;
}

/** Elysia rejected a body, query or path parameter: rerun the route's zod schema to list every issue. */
function fromValidation(error: ElysiaValidationError, request: Request): QuarryError {
  // A response that fails its own schema is the server's fault, never the client's: 500, logged.
  if (error.type === "response") return new QuarryError("INTERNAL_ERROR", "Internal server error");
  const result = error.validator?.schema?.safeParse?.(error.value);
  const where = error.type === "body" ? [] : [error.type === "params" ? "path" : error.type];
  if (result && !result.success && result.error) {
    const issues = result.error.issues.map(bodyMissing(error, request));
    return validationError(toIssues(issues, where), summarize(issues, where));
  }
  const issues = (error.all ?? []).map((i) => ({
    path: [...where, ...(i.path ?? "").split("/").filter(Boolean)],
    message: i.message ?? "is invalid",
  }));
  return validationError(issues);
}

function toQuarryError(code: unknown, error: unknown, request: Request): QuarryError {
  if (error instanceof QuarryError) return error;
  switch (code) {
    case "VALIDATION":
      return fromValidation(error as ElysiaValidationError, request);
    case "PARSE": {
      // JSON is read by our own parser (body.ts), so this is a form Elysia could not read; a route that
      // takes no form has already marked it as the wrong content type.
      const contentType = (request.headers.get("content-type") ?? "").split(";")[0] || "(none)";
      return (
        requestState(request).bodyError ??
        validationError([{ path: [], message: `is not valid ${contentType}` }], `Request body is not valid ${contentType}`)
      );
    }
    case "NOT_FOUND":
      return routeNotFound(request);
    default:
      return isOutOfSpace(error)
        ? new QuarryError("INTERNAL_ERROR", "The server is out of disk space; try again once an operator has freed some")
        : new QuarryError("INTERNAL_ERROR", "Internal server error");
  }
}

/** The answer to a request no endpoint takes: an unknown path, a method the path lacks, or metrics while they are off. */
export function routeNotFound(request: Request): QuarryError {
  return new QuarryError("NOT_FOUND", `Route not found: ${request.method} ${requestPath(request)}`);
}

/**
 * Bun.serve's own error handler, for an error thrown past Elysia's: the envelope with a plain 500, never
 * Bun's development page, which shows source lines, the stack and the working directory.
 */
export function uncaughtErrorResponse(error: Error): Response {
  console.error("request failed outside the error handler:", error);
  return Response.json(errorBody(new QuarryError("INTERNAL_ERROR", "Internal server error")), { status: 500 });
}

/**
 * The unread rest of the body of a client that said Connection: close, taken in and dropped before answering.
 * Bun closes such a connection as soon as it has answered, and a client still sending failed with EPIPE
 * instead of reading the 401 or 429: superagent (so supertest) always says close, node:http without
 * keep-alive too; 2 of 30 refused uploads of a 44 KB PDF. For at most DRAIN_MS: a client sending slower than
 * that is answered then, rather than never (Bun drops a connection idle for 30 s, answer unsent).
 */
export const DRAIN_MS = 5000;

async function drainBeforeClosing(request: Request): Promise<void> {
  if (request.bodyUsed || !request.body || !/\bclose\b/i.test(request.headers.get("connection") ?? "")) return;
  const reader = request.body.getReader();
  const drained = (async () => {
    while (!(await reader.read()).done);
  })().catch(() => undefined); // the client went away
  let timer: Timer | undefined;
  await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_MS)))]);
  clearTimeout(timer);
}

export const errorHandler = new Elysia({ name: "quarry-errors" }).onError({ as: "global" }, async ({ code, error, request, set }) => {
  const quarryError = toQuarryError(code, error, request);
  const state = requestState(request);
  if (quarryError.code === "INTERNAL_ERROR") {
    console.error(`[${state.id}] ${request.method} ${requestPath(request)} failed:`, error);
  }
  state.responseSummary.error_code = quarryError.code;
  set.status = quarryError.status;
  Object.assign(set.headers, quarryError.headers ?? {}, { "x-request-id": state.id, "content-type": "application/json" }); // as app.ts labels /api answers
  // A body refused before it was read (401, 429, or declared over its cap) is left for the server to take in
  // and drop, without keeping it: closing the connection on it made Node's fetch, node:http (axios) and
  // Python's urllib, still sending, fail with EPIPE instead of reading the answer. A stop closes such a
  // connection after its grace period (server.ts). One the client asked to close is drained first.
  await drainBeforeClosing(request);
  return errorBody(quarryError);
});
