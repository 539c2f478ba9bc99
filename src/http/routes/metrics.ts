// GET /api/metrics: Prometheus metrics (../metrics.ts), served only when QUARRY_METRICS_TOKEN is set and
// only to requests bearing it. They count requests and documents across all accounts, so an account's API
// key does not open them.
import { Elysia } from "elysia";
import { createHash, timingSafeEqual } from "node:crypto";
import type { AppContext } from "../context.ts";
import { QuarryError } from "../../errors.ts";
import { bearerToken } from "../auth.ts";
import { routeNotFound } from "../errors.ts";
import { errorResponses } from "../schemas.ts";
import { METRICS_SCHEME } from "../openapi.ts";

/** Compared by digest: the time taken says nothing about how much of the token was right. */
function sameToken(given: string | null, expected: string): boolean {
  const digest = (token: string) => createHash("sha256").update(token).digest();
  return given !== null && timingSafeEqual(digest(given), digest(expected));
}

export function metricsRoutes(ctx: AppContext) {
  return new Elysia().get(
    "/metrics",
    async ({ request, set }) => {
      const { metrics } = ctx;
      const token = ctx.config.metricsToken;
      // Off, the route is absent like any unknown one (the startup banner says how to turn it on).
      if (metrics === null || token === null) throw routeNotFound(request);
      if (!sameToken(bearerToken(request), token)) {
        throw new QuarryError("AUTHENTICATION_ERROR", "Invalid or missing metrics token", undefined, { "www-authenticate": 'Bearer realm="quarry-metrics"' });
      }
      const text = await metrics.render();
      set.headers["content-type"] = metrics.contentType;
      set.headers["cache-control"] = "no-store";
      return text;
    },
    {
      detail: {
        operationId: "getMetrics", summary: "Prometheus metrics",
        description:
          "Off unless the server runs with QUARRY_METRICS_TOKEN (--metrics-token, at least 16 printable ASCII characters, no spaces): then " +
          "`Authorization: Bearer <that token>` (not an API key or JWT) gets the Prometheus text format: quarry_http_requests_total " +
          "and quarry_http_request_duration_seconds by method, route pattern and status; quarry_search_duration_seconds by mode; " +
          "quarry_documents_processed_total by outcome, quarry_pages_parsed_total, quarry_chunks_indexed_total and " +
          "quarry_pipeline_step_duration_seconds by step; quarry_documents_processing by status; quarry_knowledge_bases, " +
          "quarry_accounts; quarry_database_size_bytes and quarry_database_free_bytes; quarry_search_indexes_loaded and the " +
          "index memory and its budget; process_resident_memory_bytes, process_cpu_seconds_total, process_start_time_seconds; " +
          "quarry_build_info. Counters start at 0 when the server starts. Without the token set the route is absent: 404 NOT_FOUND \"Route not found: GET /api/metrics\"; a wrong or " +
          "missing token: 401 AUTHENTICATION_ERROR.",
        tags: ["Service"],
        security: [{ [METRICS_SCHEME]: [] }],
        responses: {
          200: { description: "Prometheus text exposition format 0.0.4", content: { "text/plain": { schema: { type: "string" } } } },
          ...errorResponses(401, 404),
        },
      },
    },
  );
}
