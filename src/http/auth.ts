// Bearer authentication for /v1: an API key or a dashboard JWT, remembered as the request's principal.
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

export async function authenticateRequest(ctx: AppContext, request: Request): Promise<Principal> {
  const token = bearerToken(request);
  const principal = token ? await ctx.accounts.authenticate(token) : null;
  if (!principal) throw new QuarryError("AUTHENTICATION_ERROR", INVALID_API_KEY);
  requestState(request).principal = principal;
  return principal;
}

/**
 * Route-group plugin: resolves `principal` for every route that uses it (or answers 401), then applies the
 * account's per-second rate limit (429), then reports a body that could not be read (400). Runs before body
 * validation, so a rejected body still counts against the rate and shows up in the account's request history.
 */
export function authenticated(ctx: AppContext) {
  return new Elysia().derive({ as: "scoped" }, async ({ request, set }) => {
    const principal = await authenticateRequest(ctx, request);
    const perSecond = enforcedLimit(ctx.config.limitsEnabled, principal.account, (plan) => plan.requestsPerSecond);
    if (perSecond !== null) enforceRateLimit(ctx.rateLimiter, principal.account.id, perSecond, set.headers);
    throwBodyError(request);
    return { principal };
  });
}
