// Summaries for the request history: the default ones, used where a route has not filled its own, built
// from a whitelist so passwords, API keys, tokens, text and file contents can never end up in the history;
// and the bounds every summary is cut to before it is stored, whoever filled it.
import { cutToLength } from "../characters.ts";

/** Every stored summary stays within these, however large the request was. */
export const SUMMARY_LIMITS = {
  /** Items kept of a list (e.g. metadata_keys); `<field>_total` then tells how many there were. */
  listItems: 20,
  /** Characters at most of each string in a list (e.g. a metadata key), a cut one's last being "…". */
  itemLength: 64,
  /** Characters at most of any other string, likewise. */
  stringLength: 200,
  /** UTF-8 bytes of the whole summary as JSON. */
  bytes: 2048,
} as const;

/** Body and query fields copied as they are (strings are cut by boundedSummary). */
const SCALAR_FIELDS = new Set([
  "query",
  "keyword_query",
  "top_k",
  "mode",
  "alpha",
  "rerank",
  "score_threshold",
  "include_metadata",
  "name",
  "limit",
  "status",
  "status_code",
  "method",
  "path",
  "kb_id",
  "auth_type",
  "from",
  "to",
]);

/** A string (cut to `length`), number, boolean or null; undefined for anything else. */
function scalar(value: unknown, length: number): unknown {
  if (typeof value === "string") return cutToLength(value, length);
  return typeof value === "number" || typeof value === "boolean" || value === null ? value : undefined;
}

function keysOf(value: unknown): string[] | undefined {
  if (typeof value === "string") {
    try {
      return keysOf(JSON.parse(value));
    } catch {
      return undefined;
    }
  }
  return value && typeof value === "object" && !Array.isArray(value) ? Object.keys(value) : undefined;
}

function summarizeField(summary: Record<string, unknown>, key: string, value: unknown): void {
  if (value instanceof Blob) {
    summary.file_name = value instanceof File ? value.name : null;
    summary.file_size_bytes = value.size;
    if (value.type) summary.file_content_type = value.type;
  } else if (key === "filter" || key === "metadata") {
    const keys = keysOf(value);
    if (keys) summary[`${key}_keys`] = keys;
  } else if (key === "text" && typeof value === "string") {
    summary.text_length = value.length;
  } else if (SCALAR_FIELDS.has(key)) {
    const kept = scalar(value, Infinity);
    if (kept !== undefined) summary[key] = kept;
  }
}

/** What the request asked for: whitelisted body fields, then query-string fields. */
export function defaultRequestSummary(body: unknown, query: Record<string, unknown> | undefined): Record<string, unknown> {
  const summary: Record<string, unknown> = {};
  for (const source of [body, query]) {
    if (!source || typeof source !== "object" || Array.isArray(source)) continue;
    for (const [key, value] of Object.entries(source)) summarizeField(summary, key, value);
  }
  return summary;
}

/** What came back: result count, the resource's id and status, whether it was deleted. */
export function defaultResponseSummary(response: unknown): Record<string, unknown> {
  const summary: Record<string, unknown> = {};
  const data = (response as { data?: unknown } | null)?.data;
  if (Array.isArray(data)) {
    summary.result_count = data.length;
    const meta = (response as { meta?: { has_more?: unknown } }).meta;
    if (typeof meta?.has_more === "boolean") summary.has_more = meta.has_more;
  } else if (data && typeof data === "object") {
    const record = data as Record<string, unknown>;
    if (Array.isArray(record.results)) summary.result_count = record.results.length;
    if (typeof record.id === "string") summary.id = record.id;
    if (typeof record.status === "string") summary.status = record.status;
    if (typeof record.deleted === "boolean") summary.deleted = record.deleted;
  }
  return summary;
}

const TRUNCATED_MARK_BYTES = Buffer.byteLength(',"truncated":true');

/**
 * The summary within SUMMARY_LIMITS: strings cut (ending in "…"), lists cut to their first items with
 * `<field>_total` added, nested objects left out, then whole fields dropped from the end until it fits.
 * A list cut or a field left out adds `truncated: true`.
 */
export function boundedSummary(summary: Record<string, unknown>): Record<string, unknown> {
  const bounded: Record<string, unknown> = {};
  let truncated = false;
  for (const [key, value] of Object.entries(summary)) {
    if (Array.isArray(value)) {
      const kept = value.slice(0, SUMMARY_LIMITS.listItems).map((item) => scalar(item, SUMMARY_LIMITS.itemLength));
      bounded[key] = kept.filter((item) => item !== undefined);
      if (value.length > SUMMARY_LIMITS.listItems) bounded[`${key}_total`] = value.length;
      truncated ||= kept.length < value.length || kept.some((item) => item === undefined);
    } else {
      const kept = scalar(value, SUMMARY_LIMITS.stringLength);
      if (kept !== undefined) bounded[key] = kept;
      truncated ||= kept === undefined;
    }
  }
  const fields = Object.keys(bounded);
  let bytes = Buffer.byteLength(JSON.stringify(bounded));
  while (fields.length > 0 && bytes + (truncated ? TRUNCATED_MARK_BYTES : 0) > SUMMARY_LIMITS.bytes) {
    delete bounded[fields.pop()!];
    truncated = true;
    bytes = Buffer.byteLength(JSON.stringify(bounded));
  }
  if (truncated) bounded.truncated = true;
  return bounded;
}
