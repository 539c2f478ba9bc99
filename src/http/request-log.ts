// Records every /api request in the request history once its response has been sent, from the facts
// gathered in its RequestState, and counts it in the metrics. The write itself is batched by RequestLogWriter.
import { Elysia, StatusMap } from "elysia";
import type { AppContext } from "./context.ts";
import { requestState } from "./request-state.ts";
import { boundedSummary, defaultRequestSummary, defaultResponseSummary } from "./request-summary.ts";
import { bearerToken } from "./auth.ts";
import type { RequestLogRecord } from "../store/requests.ts";
import { requestPath } from "./request-path.ts";

const KB_IN_PATH = /\/knowledge-bases\/(kb_[^/]+)(?:\/|$)/;

/** The status actually sent: a returned Response carries its own, otherwise the one set on the context. */
function statusOf(setStatus: number | string | undefined, responseValue: unknown): number {
  if (responseValue instanceof Response) return responseValue.status;
  if (typeof setStatus === "number") return setStatus;
  return (typeof setStatus === "string" && StatusMap[setStatus as keyof typeof StatusMap]) || 200;
}

/**
 * A request refused before its route authenticated it (unknown route, unreadable body) still belongs to
 * the account whose valid credential it carried; looked up after the response has gone out. Only then
 * does it get its request summary.
 */
async function attributed(
  ctx: AppContext,
  entry: RequestLogRecord,
  token: string,
  requestSummary: (() => Record<string, unknown>) | null,
): Promise<RequestLogRecord> {
  const principal = await ctx.accounts.authenticate(token);
  if (!principal) return entry;
  return { ...entry, accountId: principal.account.id, auth_type: principal.authType, request_summary: requestSummary?.() ?? {} };
}

/** A summary the route (or the error handler) filled, which then replaces the default one. */
function filled(summary: Record<string, unknown>): Record<string, unknown> | null {
  return Object.keys(summary).length > 0 ? summary : null;
}

interface AfterResponseContext {
  request: Request;
  path?: string;
  /** The matched route's pattern; empty when no route matched. */
  route?: string;
  set: { status?: number | string };
  body?: unknown;
  query?: Record<string, unknown>;
  responseValue?: unknown;
}

export function requestLogging(ctx: AppContext) {
  /** When each request arrived, by the service clock: the entry's created_at. */
  const arrivals = new WeakMap<Request, Date>();
  return new Elysia({ name: "quarry-request-log" })
    .onRequest(({ request }) => {
      arrivals.set(request, ctx.clock.now());
    })
    .onAfterResponse({ as: "global" }, (c) => {
      const { request, route, set, body, query, responseValue } = c as unknown as AfterResponseContext;
      const path = requestPath(request);
      if (!path.startsWith("/api/")) return;
      const state = requestState(request);
      const elapsedMs = performance.now() - state.startedAt;
      const durationMs = Math.round(elapsedMs);
      const status = statusOf(set.status, responseValue);
      ctx.metrics?.observeRequest(request.method, route || "unmatched", status, elapsedMs / 1000);
      // Only a request attributed to an account has its body summarized: an unauthenticated one (401, or no
      // account at all) could otherwise have any amount of whatever it sent stored and summarized.
      const requestSummary =
        status === 401 ? null : () => boundedSummary(filled(state.requestSummary) ?? defaultRequestSummary(body, query));
      const entry: RequestLogRecord = {
        id: state.id,
        accountId: state.principal?.account.id ?? null,
        method: request.method,
        path,
        status_code: status,
        duration_ms: durationMs,
        auth_type: state.principal?.authType ?? null,
        kb_id: state.kbId ?? path.match(KB_IN_PATH)?.[1] ?? null,
        request_summary: state.principal ? (requestSummary?.() ?? {}) : {},
        response_summary: boundedSummary(
          filled(state.responseSummary) ?? (status < 400 ? defaultResponseSummary(responseValue) : {}),
        ),
        created_at: (arrivals.get(request) ?? ctx.clock.now()).toISOString(),
      };
      // A 401 is nobody's, whatever credential it carried (a failed login sent with a dashboard token).
      const token = state.principal || status === 401 ? null : bearerToken(request);
      ctx.requestLog.record(token ? attributed(ctx, entry, token, requestSummary) : entry);
    });
}
