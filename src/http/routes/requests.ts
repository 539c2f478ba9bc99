// GET /v1/requests and /v1/requests/{request_id}: the account's request history (service spec §2.7, §4.5).
import { Elysia } from "elysia";
import { z } from "zod";
import type { AppContext } from "../context.ts";
import { authenticated } from "../auth.ts";
import { PaginationQuery, wholeNumberParam, dataOf, errorResponses, pageOf, prefixedId, V1_ERRORS, Timestamp, Count, returnedId } from "../schemas.ts";
import { getRequestLogEntry, listRequestLog } from "../../store/requests.ts";
import { REQUEST_LOG_RETENTION_DAYS, requestLogKeptSince } from "../../store/request-log-writer.ts";
import { isoInstant, utcIso } from "../../iso-time.ts";
import { validationMessage } from "../zod-messages.ts";

const Summary = z.record(z.string(), z.unknown());

const RequestLogEntrySchema = z.object({
  id: returnedId("req").describe("The request's X-Request-Id (req_…)"),
  method: z.string(),
  path: z.string().describe("Path as requested, e.g. /api/v1/knowledge-bases/kb_…/search (no query string)"),
  status_code: z.number().int().min(100).max(599),
  duration_ms: Count.describe("Time from receiving the request to sending the response, whole milliseconds"),
  auth_type: z.enum(["api_key", "jwt"]),
  kb_id: z.string().nullable().describe("The knowledge base the request was scoped to, if any"),
  request_summary: Summary.describe("Safe fields of the request (query, top_k, mode, filter keys, file name and size…); never credentials or content"),
  response_summary: Summary.describe("Result count, resource id and status, or error_code"),
  created_at: Timestamp,
});

/**
 * Read as filter dates are (iso-time.ts): an impossible calendar date such as 2026-02-30 is a 400, not March 2.
 * A "+01:00" offset sent unencoded arrives as " 01:00" (a query string's "+" is a space): the message says so.
 */
const isoDateTime = z
  .string()
  .refine((s) => isoInstant(s) !== null, {
    error: (issue) =>
      isoInstant(String(issue.input).replace(/ (\d{2}:?\d{2})$/, "+$1")) !== null
        ? 'must be an ISO 8601 date or date-time; a "+" in a query string reads as a space: write the offset\'s "+" as %2B'
        : "must be an ISO 8601 date or date-time",
  })
  .transform((s) => utcIso(s)!);

const STATUS_CLASSES = ["2xx", "4xx", "5xx"] as const;

const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

const ListQuery = PaginationQuery.extend({
  method: z
    .string()
    .transform((m) => m.toUpperCase())
    .pipe(z.enum(HTTP_METHODS))
    .optional()
    .describe(`HTTP method, one of ${HTTP_METHODS.join(", ")} (any case)`),
  status: z
    .enum(STATUS_CLASSES, {
      error: (issue) => `${validationMessage(issue)}${/^\d{3}$/.test(String(issue.input)) ? "; for one status code use status_code" : ""}`,
    })
    .optional()
    .describe("Status class: 2xx, 4xx or 5xx (the API sends no other); an exact code is status_code"),
  status_code: wholeNumberParam(100, 599).optional().describe("Exact status code"),
  path: z.string().min(1).max(1024).optional().describe("Substring of the request path (case-sensitive)"),
  kb_id: prefixedId("kb").optional(),
  auth_type: z.enum(["api_key", "jwt"]).default("api_key").describe("api_key (default): API calls; jwt: dashboard requests"),
  from: isoDateTime.optional().describe("Only requests at or after this time (ISO 8601)"),
  to: isoDateTime.optional().describe("Only requests before this time (ISO 8601)"),
});

/** Any id is looked up: one that is not a req_ id is simply not found (404), like an unknown one. */
const RequestParams = z.object({ request_id: z.string().min(1).max(256) });

const tags = ["Request history"];

export function requestRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/requests" })
    .use(authenticated(ctx))
    .get(
      "",
      async ({ query, principal }) => {
        await ctx.requestLog.flushPending();
        const filter = {
          authType: query.auth_type,
          method: query.method,
          statusClass: query.status ? Number(query.status[0]) : undefined,
          statusCode: query.status_code,
          pathContains: query.path,
          kbId: query.kb_id,
          from: query.from,
          to: query.to,
        };
        return listRequestLog(ctx.db, principal.account.id, requestLogKeptSince(ctx.clock.now()), filter, query.limit, query.cursor);
      },
      {
        query: ListQuery,
        response: { 200: pageOf(RequestLogEntrySchema) },
        detail: {
          operationId: "listRequests", summary: "List logged requests, most recent first",
          description: [
            "Every request to the API is recorded once its response has been sent; the X-Request-Id header of a response is the id of its entry.",
            "Only the caller's own account is listed, and by default only requests made with the API key; auth_type=jwt lists the dashboard's requests.",
            "Requests that carried no valid credential (signup, login, a missing, unknown or expired key or token, the payment webhook) cannot be attributed to an account and are not listed.",
            "A valid credential that an endpoint refuses (the API key on /auth/api-key/regenerate, which needs the dashboard token) is the account's, so that 401 is listed.",
            "Filters combine with AND; from is inclusive and to exclusive.",
            `Entries are kept for ${REQUEST_LOG_RETENTION_DAYS} days.`,
          ].join(" "),
          tags,
          responses: errorResponses(...V1_ERRORS),
        },
      },
    )
    .get(
      "/:request_id",
      async ({ params, principal }) => {
        await ctx.requestLog.flushPending();
        return { data: getRequestLogEntry(ctx.db, principal.account.id, requestLogKeptSince(ctx.clock.now()), params.request_id) };
      },
      {
        params: RequestParams,
        response: { 200: dataOf(RequestLogEntrySchema) },
        detail: {
          operationId: "getRequest", summary: "Get one logged request",
          description: "An unknown id, or another account's request id, is 404 NOT_FOUND \"Request not found: <id>\".",
          tags,
          responses: errorResponses(...V1_ERRORS, 404),
        },
      },
    );
}
