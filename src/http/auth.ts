// Bearer authentication for /v1: an API key or a dashboard JWT, remembered as the request's principal,
// then the account's per-second rate limit. Requests with a body are admitted in onRequest (request-gate.ts),
// before anything reads the body; the rest when their route is matched.
import { Elysia } from "elysia";
import { QuarryError } from "../errors.ts";
import { INVALID_API_KEY, type Principal } from "../accounts/service.ts";
import type { AppContext } from "./context.ts";
import { requestState } from "./request-state.ts";
import { enforceRateLimit } from "./rate-limit.ts";
import { enforcedLimit } from "../billing/limits.ts";
import { throwBodyError } from "./body.ts";

export function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match ? match[1] : null;
}

/** 401 for a missing or invalid bearer credential, saying which scheme is expected (RFC 6750). */
export function invalidCredential(message = INVALID_API_KEY): QuarryError {
  return new QuarryError("AUTHENTICATION_ERROR", message, undefined, { "www-authenticate": 'Bearer realm="quarry"' });
}

export async function authenticateRequest(ctx: AppContext, request: Request): Promise<Principal> {
  const token = bearerToken(request);
  const principal = token ? await ctx.accounts.authenticate(token) : null;
  if (!principal) throw invalidCredential();
  requestState(request).principal = principal;
  return principal;
}

/** Requests already admitted, so the route's check does not take a second rate-limit token. */
const admitted = new WeakMap<Request, Principal>();

/** The credential (401), then the account's per-second rate limit (429); once per request. */
export async function admit(ctx: AppContext, request: Request, headers: Record<string, unknown>): Promise<Principal> {
  const known = admitted.get(request);
  if (known) return known;
  const principal = await authenticateRequest(ctx, request);
  const perSecond = enforcedLimit(ctx.config.limitsEnabled, principal.account, (plan) => plan.requestsPerSecond);
  if (perSecond !== null) enforceRateLimit(ctx.rateLimiter, principal.account.id, { perSecond }, headers);
  admitted.set(request, principal);
  return principal;
}

/**
 * Route-group plugin: resolves `principal` for every route that uses it (or answers 401), then applies the
 * account's per-second rate limit (429), then reports a body that could not be read (400). Runs before body
 * validation, so a rejected body still counts against the rate and shows up in the account's request history.
 */
export function authenticated(ctx: AppContext) {
  return new Elysia().derive({ as: "scoped" }, async ({ request, set }) => {
    const principal = await admit(ctx, request, set.headers);
    throwBodyError(request);
    return { principal };
  });
}
