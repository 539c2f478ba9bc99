// Default summaries for the request history, used where a route has not filled its own. Built from a
// whitelist, so passwords, API keys, tokens, text and file contents can never end up in the history.

const MAX_STRING = 200;

/** Body and query fields copied as they are (strings cut to 200 characters). */
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

function scalar(value: unknown): unknown {
  if (typeof value === "string") return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value;
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
    const kept = scalar(value);
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
