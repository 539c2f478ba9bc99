// The plans, usage limits and rate limiting, as told in the OpenAPI description; the numbers come from
// the plan table itself.
import { PLANS, PLAN_NAMES, TRIAL_DAYS, type Plan } from "../billing/plans.ts";
import { FILTER_LIMITS } from "../search/filters.ts";
import { METADATA_LIMITS } from "../store/metadata-limits.ts";
import { MAX_NAME_LENGTH } from "../ingest/upload-rules.ts";
import { DOCX_CHARS_PER_PAGE, MAX_PAGES } from "../ingest/parsers/page-limit.ts";
import { PACKAGE_LIMITS } from "../ingest/parsers/package-limits.ts";
import { SUMMARY_LIMITS } from "./request-summary.ts";
import { MAX_PATH_CHARS, UNATTRIBUTED_PER_SECOND } from "../store/request-log-writer.ts";
import { AUTH_RATE, MAX_TRACKED_CLIENTS, WEBHOOK_RATE } from "./request-gate.ts";
import { LOGIN_FAILURE_RATE } from "./routes/auth.ts";
import { DRAIN_MS } from "./errors.ts";

function size(bytes: number): string {
  const gb = bytes / 1024 ** 3;
  return gb >= 1 ? `${gb} GB` : `${bytes / 1024 ** 2} MB`;
}

const ROWS: [string, (plan: Plan) => string][] = [
  ["Price per month (USD)", (p) => (p.priceUsdPerMonth ? String(p.priceUsdPerMonth) : "free")],
  ["Pages processed per month", (p) => String(p.pagesPerMonth)],
  ["Search queries per month", (p) => String(p.searchQueriesPerMonth)],
  ["Knowledge bases", (p) => String(p.knowledgeBases)],
  ["Documents (per account)", (p) => String(p.documents)],
  ["Storage", (p) => size(p.storageBytes)],
  ["Requests per second", (p) => String(p.requestsPerSecond)],
];

const PLAN_TABLE = [
  `| | ${PLAN_NAMES.join(" | ")} |`,
  `|---|${PLAN_NAMES.map(() => "---").join("|")}|`,
  ...ROWS.map(([label, value]) => `| ${label} | ${PLAN_NAMES.map((n) => value(PLANS[n])).join(" | ")} |`),
].join("\n");

export const LIMITS_DESCRIPTION = `**Plans.**

${PLAN_TABLE}

**Usage limits.** Allowances are per billing period: monthly, anchored at signup, or at the start of the paid subscription
once there is one; usage starts from zero with each period (GET /v1/usage). Exceeding one is 429 USAGE_LIMIT_EXCEEDED:
- search queries: each search call counts one; details \`{limit, current_usage, plan, requested}\`;
- pages: uploads, text ingestion and replacements are refused once the period's pages are used up, details \`{resource:"pages", limit, used}\`;
  a document whose pages would overrun the allowance ends \`failed\` with error_detail saying so, and counts nothing;
- knowledge bases (on create), documents and storage (on upload, text ingestion and replacement): details \`{resource:"knowledge_bases"|"documents"|"storage", limit, used}\`, storage in bytes:
  the stored files plus the metadata of the account's documents and knowledge bases (its JSON, UTF-8; an empty object counts 0). Deleting frees room at once;
- the trial lasts ${TRIAL_DAYS} days; afterwards uploads, text ingestion, replacements and searches are refused with details
  \`{resource:"trial", limit:${TRIAL_DAYS}, used:<whole days since signup>}\` until the account subscribes. Everything else (reads, listing, deleting) keeps working.
An account whose subscription ends returns to the trial plan's allowances with the trial over. A plan change applies at once.

**Page counts.** pdf: its pages; pptx: the slides the presentation lists; xlsx: its worksheets; an image: 1, a TIFF its frames (images are read by their content, whichever image extension they came under);
docx: counted from the content, as a .docx stores flowing text: explicit page breaks and section breaks (other than continuous ones)
split the text, and each part counts one page per ${DOCX_CHARS_PER_PAGE} characters of text (as many as a text file is billed a page for in bytes),
at least one; the page count Word records in the file counts instead when it is higher. A rich document of more than ${MAX_PAGES} pages ends \`failed\`;
the text types (txt, md, html, htm, csv, tsv, json, and text ingestion) are bounded by size instead (50 MB a file, 10,000,000 characters of text) and billed by their estimate.
A docx, pptx or xlsx whose parts decompress to more than ${PACKAGE_LIMITS.partBytes / 1024 ** 2} MB each or ${PACKAGE_LIMITS.fileBytes / 1024 ** 2} MB in all, or that has more than
${PACKAGE_LIMITS.parts} parts, ends \`failed\` with error_detail "… decompresses to more than N MB; it looks like a zip bomb" (or "… has more than N parts; …").

**Size limits** (400 VALIDATION_ERROR, each problem in details.issues with its path, e.g. \`["metadata","a","b"]\` or \`["filter","topic","$in"]\`):
- a document's name: at most ${MAX_NAME_LENGTH} characters, for an uploaded file's name as for text ingestion's \`name\`;
- metadata of a knowledge base or document (create, PATCH, upload, replacement and text ingestion alike): a JSON object of at most
  ${METADATA_LIMITS.bytes} bytes as JSON, at most ${METADATA_LIMITS.keys} keys in it and in each object nested in it, keys of at most ${METADATA_LIMITS.keyLength} characters,
  objects and arrays nested at most ${METADATA_LIMITS.depth} levels (the metadata object being the first);
- a search filter: at most ${FILTER_LIMITS.keys} metadata keys of at most ${FILTER_LIMITS.keyLength} characters, at most ${FILTER_LIMITS.listValues} values in each $in/$nin, string values
  of at most ${FILTER_LIMITS.stringLength} characters, at most ${FILTER_LIMITS.bytes} bytes as JSON in all.
A filter or metadata over its byte or key-count limit is reported as one issue at \`["filter"]\` or \`["metadata"]\` (or the nested object's path).

**Request history.** Summaries are bounded: lists (such as metadata_keys and filter_keys) keep their first ${SUMMARY_LIMITS.listItems} items, a longer item
cut to ${SUMMARY_LIMITS.itemLength} characters, the last of them "…", with \`<field>_total\` giving the full count; a longer string is cut to
${SUMMARY_LIMITS.stringLength} characters, the last of them "…"; a summary
is at most ${SUMMARY_LIMITS.bytes} bytes as JSON, fields being dropped from the end beyond that; a summary that lost items or fields has \`truncated: true\`.
A request carrying no valid credential of an account, or answered 401 by a route that reads no credential (a failed login,
whatever it carried), is recorded without a request summary and listed to no account (${UNATTRIBUTED_PER_SECOND} such requests a second are kept at most,
for a day). A valid credential a route refuses (an API key sent to POST /auth/api-key/regenerate, which takes the dashboard token)
is listed to its account, without a request summary. A path is kept to ${MAX_PATH_CHARS} characters, the last of them "…".

**Rate limits.** Every request to a /v1 endpoint counts against the account's per-second rate (the same bucket whichever credential is used);
a request without a body to a path or method no endpoint answers is a 404 without a credential check, and counts nothing.
The algorithm is a token bucket per account: capacity = the plan's requests per second, refilled continuously at that rate.
A full bucket allows a burst of that many requests at once, then one request per 1/rate seconds; a plan change applies to
the bucket at once: its capacity becomes the new rate and the requests already spent from it stay spent (an account that just
upgraded from 5 to 10 per second after 2 requests has 8 left). Buckets live in the server's memory. With plan limits on (QUARRY_LIMITS, the default), each authenticated /v1 response carries
\`RateLimit-Limit\` (the rate), \`RateLimit-Remaining\` (whole requests left in the bucket) and \`RateLimit-Reset\` (seconds
until the bucket is full again); a refused request is 429 RATE_LIMIT_EXCEEDED "Rate limit exceeded" with \`Retry-After\`
(whole seconds until a request will be accepted). A refused request takes no token.
A /v1 request's body is read only after its credential (401) and the rate limit (429) have passed, so a refused upload
is answered at once: the rest of its body is taken in and dropped, never kept (the connection stays open, so that clients still sending can
read the answer; a client that sent Connection: close is answered once its body is in, or after ${DRAIN_MS / 1000} s, as the connection closes with the answer); then the body is checked (400).

**Per-client rate limits.** /auth/* (signup, login and API key regeneration together) allows a burst of ${AUTH_RATE.burst} requests per client IP,
refilled at ${AUTH_RATE.perSecond} per second; /webhooks/* a burst of ${WEBHOOK_RATE.burst}, refilled at ${WEBHOOK_RATE.perSecond} per second. Same token bucket, headers
(\`RateLimit-Limit\` being the burst) and 429 RATE_LIMIT_EXCEEDED as above. The client is the connection's address (IPv6 clients by their /64);
\`X-Forwarded-For\` is ignored unless \`QUARRY_TRUST_PROXY=on\` (behind a reverse proxy: then the client is its last entry, the one the proxy added).
At most ${MAX_TRACKED_CLIENTS} clients are tracked, the least recently seen being forgotten first. Login answers an unknown email and a wrong password
with the same 401 after the same password-hash work; signup reports an existing email (409 CONFLICT), as the API requires, at the same per-IP rate.
Failed logins are also limited per email address, registered or not, from any client: a burst of ${LOGIN_FAILURE_RATE.burst}, then one more every ${Math.round(1 / LOGIN_FAILURE_RATE.perSecond)} s
(429 RATE_LIMIT_EXCEEDED with \`Retry-After\`, whatever the password; at most ${MAX_TRACKED_CLIENTS} addresses tracked); successful logins take nothing from it.

**Self-hosting.** \`QUARRY_LIMITS=off\` turns off every allowance, count and per-account rate limit (usage is still metered and shown; the per-client limits stay);
\`quarry accounts list\` and \`quarry accounts set-plan <account id or email> <plan>\` change plans without a payment provider.`;
