// The OpenAPI 3.1 document at /api/openapi.json, generated from the route schemas by @elysiajs/openapi's
// generator and completed here: the generator drops the error responses declared in `detail.responses`
// when a route also has success schemas, and cannot see the JSON media type behind our own body parser.
import { Elysia } from "elysia";
import { z } from "zod";
import { LIMITS_DESCRIPTION } from "./limits-description.ts";
import { DEFAULT_PARSE_MEMORY_MB } from "../config.ts";
import { MAX_BODY_BYTES, MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH, MAX_JSON_KEYS, MAX_JSON_VALUES, MAX_TEXT_BODY_BYTES, UNAUTHENTICATED_BODY_LIMITS } from "./body.ts";

const DESCRIPTION = `Quarry stores documents in knowledge bases, parses, chunks, embeds and indexes them in the background,
and answers searches with ranked chunks for a language model.

**Authentication.** Send \`Authorization: Bearer <API key>\` (or the dashboard JWT from signup/login) on every /v1 call. A missing or
invalid one is 401 AUTHENTICATION_ERROR "Invalid or missing API key" with \`WWW-Authenticate: Bearer realm="quarry"\`.

**Errors.** Every error is \`{"error":{"code","message","details"}}\`. Status by code: VALIDATION_ERROR 400
(details.issues = [{path, message}]), AUTHENTICATION_ERROR 401, NOT_FOUND 404, CONFLICT 409, RATE_LIMIT_EXCEEDED 429,
USAGE_LIMIT_EXCEEDED 429, EXTERNAL_SERVICE_ERROR 503, INTERNAL_ERROR 500. An issue's path names body fields as they are
(\`["name"]\`), query parameters under \`"query"\` (\`["query","limit"]\`), path parameters under \`"path"\` (\`["path","kb_id"]\`),
a body that is not a JSON object as \`[]\`, a body too large as \`["body"]\`, a wrong Content-Type as \`["headers","content-type"]\`. An unknown route, or a known path with a method it does not have, is 404 NOT_FOUND
"Route not found: <METHOD> <path>". Malformed JSON, a Content-Type other than application/json (multipart/form-data only on
the uploads; the payment webhook reads its body as sent; a body sent with no Content-Type is read as JSON), a body over its route's cap (declared or, when chunked, counted: the uploads ${MAX_BODY_BYTES} bytes, POST …/documents/text ${MAX_TEXT_BODY_BYTES}, room for its longest text written with JSON escapes, any other /v1 body ${MAX_JSON_BODY_BYTES}; on the routes that take no API key ${UNAUTHENTICATED_BODY_LIMITS.map(([prefix, max]) => `${prefix.replace(/^\/api/, "")}* ${max}`).join(", ")}) and JSON nesting arrays and objects more than ${MAX_JSON_DEPTH} levels deep, or holding more than ${MAX_JSON_KEYS} object keys or ${MAX_JSON_VALUES} values in all, and a body sent compressed (a Content-Encoding other than identity, at \`["headers","content-encoding"]\`) are 400 VALIDATION_ERROR. A body sent with GET, which HTTP gives no meaning, is not read (only its declared size is checked). A path id
needs its type prefix (kb_, doc_; otherwise 400; a request id without req_ is simply not found, 404); a prefixed id that does not exist, or belongs to another account, is
404 "<Resource> not found: <id>". On /v1 the order of checks is: credential (401), rate limit (429), then the body
(400): the body is not read before the credential and the rate limit have passed. INTERNAL_ERROR 500 is a failure on the
server's side: "The server is out of disk space; try again once an operator has freed some" when a write found the disk full,
else "Internal server error" (the cause is logged with the request id, never sent).

**Processing.** Documents are processed in the background. Accounts take turns: the next document processed belongs to
the account with the fewest documents in processing, then to the one served longest ago (first in, first out within an
account), so one account's long queue does not hold back another's upload. Each file is parsed in its own process,
limited to QUARRY_PARSE_MEMORY_MB of memory (default ${DEFAULT_PARSE_MEMORY_MB}) and 45 minutes; a file over either ends \`failed\` with
error_detail "Parsing used more than <N> MB of memory and was stopped" or "Parsing took longer than 45 minutes and was
stopped", and no other document is affected. Deleting a document, or its knowledge base, while it is processed stops its
processing at once; nothing of it is indexed.

**Pagination.** Lists return \`{data, meta:{cursor, has_more}}\`; pass \`cursor\` to get the next page. Default page size 20, maximum 100. A cursor is valid only for the list that returned it: a malformed one, or one from another list (of another kind, or of another knowledge base or account), is a 400 VALIDATION_ERROR at \`query.cursor\`. A document's chunks are the exception: their cursor is the chunk_index of the page's last chunk ("19"), which a client may also write.

**Null in request bodies.** An optional field sent as null means the same as leaving it out: a new knowledge base's description
and metadata, raw text's name and metadata, a search's filter, score_threshold and keyword_query. In PATCH /v1/knowledge-bases/{kb_id}
null clears the description; name and metadata cannot be null there, nor a document's metadata in its PATCH.

**Request ids.** Every response carries \`X-Request-Id\`, the id of its entry in the request history.

${LIMITS_DESCRIPTION}`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface RouteInfo {
  method: string;
  path: string;
  hooks?: { body?: unknown; detail?: { responses?: Record<string, unknown>; security?: unknown[] } };
}

/**
 * A request schema as JSON Schema. zod leaves out the default of a value read from text and converted
 * (a query parameter's number: its default is the converted value, not the text); it is stated anyway.
 */
function toJsonSchema(schema: unknown): Json {
  return z.toJSONSchema(schema as z.ZodType, {
    io: "input",
    unrepresentable: "any",
    override: ({ zodSchema, jsonSchema }) => {
      const def = zodSchema._zod.def;
      if (def.type === "default" && jsonSchema.default === undefined) jsonSchema.default = (def as z.core.$ZodDefaultDef).defaultValue;
    },
  });
}

/** The headers responses carry, in `components.headers`; headersOf says which response has which. */
const HEADERS: Record<string, { description: string; schema: Json }> = {
  "X-Request-Id": { description: "The id of the request's entry in the request history (req_…)", schema: { type: "string" } },
  "RateLimit-Limit": {
    description:
      "The rate: the bucket's capacity (the account's per-second rate on /v1, the client IP's burst on /auth and /webhooks). The RateLimit headers are not sent on /v1 when the server runs with QUARRY_LIMITS=off",
    schema: { type: "integer" },
  },
  "RateLimit-Remaining": { description: "Whole requests left in the bucket", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the bucket is full again", schema: { type: "integer" } },
  "Retry-After": {
    description:
      "Whole seconds until a request will be accepted. Sent with RATE_LIMIT_EXCEEDED only: waiting does not lift a USAGE_LIMIT_EXCEEDED (a plan's count or monthly allowance), so that 429 has none",
    schema: { type: "integer" },
  },
  "WWW-Authenticate": { description: 'Bearer realm="quarry" (realm="quarry-metrics" on /api/metrics)', schema: { type: "string" } },
};

const RATE_LIMITED_PREFIXES = ["/api/v1/", "/api/auth/", "/api/webhooks/"];

/**
 * The headers of one response: X-Request-Id on all; the bucket's RateLimit headers on every response of a
 * rate-limited route except a /v1 401 (no account to count against); Retry-After on a 429; WWW-Authenticate
 * on the 401 of an operation that takes a bearer credential (`security` not emptied: not login, signup or
 * the payment webhook, which is signed instead).
 */
function headersOf(path: string, status: string, bearer: boolean): string[] {
  const headers = ["X-Request-Id"];
  if (RATE_LIMITED_PREFIXES.some((prefix) => path.startsWith(prefix)) && !(status === "401" && path.startsWith("/api/v1/"))) {
    headers.push("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset");
  }
  if (status === "429") headers.push("Retry-After");
  if (status === "401" && bearer) headers.push("WWW-Authenticate");
  return headers;
}

function completeOperation(operation: Json, route: RouteInfo): void {
  operation.responses = { ...(route.hooks?.detail?.responses ?? {}), ...operation.responses };
  const bearer = operation.security === undefined || operation.security.length > 0;
  for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
    const headers = Object.fromEntries(headersOf(route.path, status, bearer).map((name) => [name, { $ref: `#/components/headers/${name}` }]));
    // A copy: routes share their error entries (schemas.ts), and their headers differ by path.
    operation.responses[status] = { ...response, headers };
  }
  const body = route.hooks?.body;
  const content = operation.requestBody?.content;
  if (body && content && Object.keys(content).length === 0) {
    content["application/json"] = { schema: toJsonSchema(body) };
  }
}

/** The security scheme of GET /api/metrics, whose token belongs to the server, not to an account. */
export const METRICS_SCHEME = "metricsToken";
/** The security scheme of POST /api/auth/api-key/regenerate, which takes the dashboard JWT and refuses an API key. */
export const JWT_SCHEME = "dashboardJwt";

/** The generator is imported at the first request for the document: loading it took ~0.15 s of every start. */
async function buildDocument(app: Elysia, version: string): Promise<Json> {
  const { toOpenAPISchema } = await import("@elysiajs/openapi/openapi");
  const { paths, components } = toOpenAPISchema(app as never, undefined, undefined, { zod: toJsonSchema }, "3.1.0") as Json;
  for (const route of (app as Json).getGlobalRoutes() as RouteInfo[]) {
    const operation = paths[route.path.replace(/:([^/]+)/g, "{$1}")]?.[route.method.toLowerCase()];
    if (operation) completeOperation(operation, route);
  }
  return {
    openapi: "3.1.0",
    info: { title: "Quarry API", version, description: DESCRIPTION },
    security: [{ bearer: [] }],
    paths,
    components: {
      ...components,
      headers: HEADERS,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "API key (qk_…) or dashboard JWT" },
        [JWT_SCHEME]: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "The dashboard JWT from signup or login (an API key is refused)" },
        [METRICS_SCHEME]: { type: "http", scheme: "bearer", description: "The server's QUARRY_METRICS_TOKEN (GET /api/metrics only; no account credential opens it)" },
      },
    },
  };
}

export function openapiRoute(version: string) {
  const plugin = new Elysia({ name: "quarry-openapi" });
  let document: Promise<Json> | null = null;
  const built = () =>
    buildDocument(plugin, version).catch((error) => {
      document = null; // tried again at the next request
      throw error;
    });
  return plugin.get("/openapi.json", () => (document ??= built()), { detail: { hide: true } });
}
