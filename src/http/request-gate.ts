// Checks made in onRequest, before anything reads the body (Elysia parses bodies before a route's own
// hooks run): a /v1 request with a body is authenticated and rate-limited per account here, so a missing
// credential (401) or an exhausted rate (429) costs the server no upload; /auth and /webhooks, which
// take no API key, are rate-limited per client IP. Oversized bodies are refused after this (body.ts).
import { Elysia } from "elysia";
import type { AppContext } from "./context.ts";
import { admit } from "./auth.ts";
import { enforceRateLimit, type Rate } from "./rate-limit.ts";
import { clientAddress, clientKey } from "./client-ip.ts";
import { hasBody } from "./body.ts";
import { requestPath } from "./request-path.ts";

/**
 * Per client IP (an IPv6 /64): signup, login and key regeneration together. Slows password guessing and email
 * probing (failed logins are also limited per email, routes/auth.ts). A burst of 50: a test suite or a
 * provisioning script that signs up an account per test met the 20 of before; 50 argon2id hashes take both
 * cores for about half a second.
 */
export const AUTH_RATE = { perSecond: 10, burst: 50 } satisfies Rate;
/** Per client IP: payment provider deliveries, which can arrive in bursts of retries. */
export const WEBHOOK_RATE: Rate = { perSecond: 50, burst: 100 };
/** Client IPs tracked at most (least recently seen forgotten first), so the limiter's memory is bounded. */
export const MAX_TRACKED_CLIENTS = 10_000;

const CLIENT_RATES: [prefix: string, rate: Rate][] = [
  ["/api/auth/", AUTH_RATE],
  ["/api/webhooks/", WEBHOOK_RATE],
];

export function requestGate(ctx: AppContext) {
  return new Elysia({ name: "quarry-request-gate" }).onRequest(async ({ request, set, server }) => {
    const path = requestPath(request);
    // Bodyless /v1 requests are admitted by their route, so an unknown route stays a 404.
    if (path.startsWith("/api/v1/")) {
      if (hasBody(request)) await admit(ctx, request, set.headers);
      return;
    }
    const match = CLIENT_RATES.find(([prefix]) => path.startsWith(prefix));
    if (!match) return;
    const client = clientKey(clientAddress(request, server, ctx.config.trustProxy));
    enforceRateLimit(ctx.clientRateLimiter, `${match[0]} ${client}`, match[1], set.headers);
  });
}
