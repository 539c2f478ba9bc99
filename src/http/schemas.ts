// Shared request/response schemas (zod): they validate requests and generate the OpenAPI document.
import { z } from "zod";
import "./zod-messages.ts";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../store/pagination.ts";
import { STATUS_BY_CODE, type ErrorCode } from "../errors.ts";
import { METADATA_LIMITS, metadataIssues } from "../store/metadata-limits.ts";
import { DOCUMENT_STATUSES } from "../store/documents.ts";
import type { IdPrefix } from "../store/ids.ts";

/**
 * Metadata is passed through as it is, not rebuilt by z.record: that copies key by key, which drops an own
 * "__proto__" key (JSON.parse keeps it) from requests and from responses alike, and takes ~0.7 s for
 * 100,000 keys. Requests are checked by metadataIssues, which admits only objects; responses hold what was stored.
 */
function passedThrough(schema: z.ZodType): z.ZodType<Record<string, unknown>> {
  return schema.meta({ type: "object", additionalProperties: true }) as unknown as z.ZodType<Record<string, unknown>>;
}

/** A moment as the service returns it: ISO 8601 in UTC with milliseconds, e.g. 2026-01-31T12:00:00.000Z. */
export const Timestamp = z.string().meta({ format: "date-time" });

export const Metadata = passedThrough(z.unknown()).describe("Free-form JSON object");

/** Metadata as a request sends it: a JSON object within METADATA_LIMITS, each problem an issue with its path. */
export const MetadataInput = passedThrough(
  z.unknown().superRefine((metadata, ctx) => {
    // Reached only where metadata is required (an optional field's absence never gets here).
    if (metadata === undefined) return void ctx.addIssue({ code: "custom", path: [], message: "is required" });
    for (const issue of metadataIssues(metadata)) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  }),
).describe(
  `Free-form JSON object: at most ${METADATA_LIMITS.bytes} bytes as JSON, ${METADATA_LIMITS.keys} keys per object, ` +
    `keys of at most ${METADATA_LIMITS.keyLength} characters, objects and arrays nested at most ${METADATA_LIMITS.depth} levels`,
);

const ValidationDetails = z.object({
  issues: z.array(z.object({ path: z.array(z.union([z.string(), z.number()])), message: z.string() })),
});

/** A count, size, index or page number a response carries: a whole number, never negative. */
export const Count = z.number().int().min(0);

/** USAGE_LIMIT_EXCEEDED's details: an allowance or count (billing/usage.ts, store/knowledge-bases.ts), or the search queries'. */
const UsageLimitDetails = z.union([
  z
    .object({ resource: z.enum(["trial", "pages", "documents", "storage", "knowledge_bases"]), limit: Count, used: Count })
    .describe("The trial (days), the monthly pages, or the documents, storage bytes or knowledge bases the plan allows"),
  z
    .object({ limit: Count, current_usage: Count, plan: z.string(), requested: Count })
    .describe("The monthly search queries"),
]);

/** A 409 for a document still processing (replace): where it is. */
const ConflictDetails = z.object({ status: z.enum(DOCUMENT_STATUSES) }).describe("A document still processing: its status");

/** What an error of each status carries in `details`: 400 always its issues, a 409 (replace) the document's status, others none. */
const DETAILS_BY_STATUS: Record<number, z.ZodType> = { 400: ValidationDetails, 409: ConflictDetails };

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "VALIDATION_ERROR: details.issues lists each problem as {path, message}",
  401: "AUTHENTICATION_ERROR: missing or invalid credential",
  404: "NOT_FOUND: '<Resource> not found: <id>'",
  409: "CONFLICT: the document is still processing (details.status)",
  429: "RATE_LIMIT_EXCEEDED: the account's per-second plan rate (no details)",
  500: "INTERNAL_ERROR",
  503: "EXTERNAL_SERVICE_ERROR: the embedding model failed or timed out",
};

/** An OpenAPI response entry: the error envelope with these codes only, and `details` when given. */
function errorEntry(description: string, codes: [ErrorCode, ...ErrorCode[]], details?: z.ZodType) {
  const envelope = z.object({ error: z.object({ code: z.enum(codes), message: z.string(), ...(details ? { details } : {}) }) });
  // Typed loosely: OpenAPI typings and JSON Schema typings disagree on details that do not matter here.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const schema: any = z.toJSONSchema(envelope);
  return { description, content: { "application/json": { schema } } };
}

type ErrorEntry = ReturnType<typeof errorEntry>;

/**
 * Each entry, made once: routes declare theirs as they are built, at every start, and making one per route
 * took 30 ms of it (the OpenAPI document copies an entry before giving it headers).
 */
const entries = new Map<string, ErrorEntry>();

function entry(key: string, make: () => ErrorEntry): ErrorEntry {
  let made = entries.get(key);
  if (!made) entries.set(key, (made = make()));
  return made;
}

/** A status's entry: its codes (a 429 only the rate limit; usage-limited routes say so, see meteredErrorResponses). */
function statusEntry(status: number): ErrorEntry {
  return entry(String(status), () => {
    const codes = (Object.keys(STATUS_BY_CODE) as ErrorCode[]).filter((code) => STATUS_BY_CODE[code] === status && code !== "USAGE_LIMIT_EXCEEDED");
    return errorEntry(ERROR_DESCRIPTIONS[status] ?? "Error", codes as [ErrorCode, ...ErrorCode[]], DETAILS_BY_STATUS[status]);
  });
}

/** OpenAPI `responses` entries for the error statuses a route can return. */
export function errorResponses(...statuses: number[]): Record<string, ErrorEntry> {
  return Object.fromEntries(statuses.map((status) => [String(status), statusEntry(status)]));
}

/**
 * errorResponses for the routes that spend a plan allowance or count (knowledge base create, upload, raw
 * text, replace, search): their 429 is also USAGE_LIMIT_EXCEEDED, with its figures in `details`.
 */
export function meteredErrorResponses(...statuses: number[]): Record<string, ErrorEntry> {
  const limited = entry("429 metered", () =>
    errorEntry(
      "RATE_LIMIT_EXCEEDED (per-second plan rate; no details) or USAGE_LIMIT_EXCEEDED (plan allowance; details as below)",
      ["RATE_LIMIT_EXCEEDED", "USAGE_LIMIT_EXCEEDED"],
      UsageLimitDetails.optional(),
    ),
  );
  return { ...errorResponses(...statuses), ...(statuses.includes(429) ? { 429: limited } : {}) };
}

/** errorResponses for the routes that take no API key (/auth, /webhooks): a 429 there is the client IP's rate, a 409 an email taken. */
export function perClientErrorResponses(...statuses: number[]): Record<string, ErrorEntry> {
  const perClient: Record<number, () => ErrorEntry> = {
    409: () => entry("409 email", () => errorEntry("CONFLICT: an account with this email already exists (no details)", ["CONFLICT"])),
    429: () => entry("429 per client", () => errorEntry("RATE_LIMIT_EXCEEDED: the client IP's rate (see Per-client rate limits)", ["RATE_LIMIT_EXCEEDED"])),
  };
  return Object.fromEntries(statuses.map((status) => [String(status), perClient[status]?.() ?? statusEntry(status)]));
}

/** The errors every authenticated /v1 route can return. */
export const V1_ERRORS = [400, 401, 429, 500] as const;

/**
 * A query parameter holding a whole number from `min` to `max`, written in decimal digits: Number() would
 * also take "1e1", "0x10", " 5" and "" (as 0), and a repeated parameter came out as NaN.
 */
export function wholeNumberParam(min: number, max: number) {
  const rule = `must be a whole number from ${min} to ${max}`;
  return z
    .string(rule)
    .regex(/^[0-9]{1,10}$/, rule)
    .transform(Number)
    .pipe(z.number().min(min, rule).max(max, rule))
    .meta({ type: "integer", minimum: min, maximum: max, pattern: undefined });
}

export const PaginationQuery = z.object({
  cursor: z
    .string()
    .optional()
    .describe("Opaque cursor from meta.cursor of the previous page of the same list; absent or empty: the first page; any other value is a 400"),
  limit: wholeNumberParam(1, MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .describe(`Page size, 1–${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`),
});

export const PageMeta = z.object({
  cursor: z.string().nullable().describe("Pass as ?cursor= to get the next page; null on the last page"),
  has_more: z.boolean(),
});

/**
 * A path or query id: only its type prefix is checked (400 without it). Anything after the prefix is left
 * to the lookup, so an id that merely does not exist (kb_DOES-NOT-EXIST) is a 404 like any other.
 */
export function prefixedId(prefix: string) {
  return z
    .string()
    .regex(new RegExp(`^${prefix}_.+$`), `must be an id starting with ${prefix}_`)
    .describe(`Starts with ${prefix}_; without that prefix: 400 VALIDATION_ERROR`);
}

/** An id a response carries: its type prefix (spec 2), then the rest (store/ids.ts). */
export function returnedId(prefix: IdPrefix) {
  return z.string().regex(new RegExp(`^${prefix}_.+$`)).describe(`Starts with ${prefix}_`);
}

export function dataOf<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema });
}

export function pageOf<T extends z.ZodType>(schema: T) {
  return z.object({ data: z.array(schema), meta: PageMeta });
}
