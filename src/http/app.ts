// The HTTP application: the API under /api and the built-in dashboard at /dashboard. Routes stay thin;
// the work happens in the domain modules.
import { Elysia } from "elysia";
import type { AppContext } from "./context.ts";
import { errorHandler } from "./errors.ts";
import { bodyHandling } from "./body.ts";
import { requestGate } from "./request-gate.ts";
import { startRequest } from "./request-state.ts";
import { requestPath } from "./request-path.ts";
import { openapiRoute } from "./openapi.ts";
import { docsPage } from "./docs-page.ts";
import { healthRoutes } from "./routes/health.ts";
import { metricsRoutes } from "./routes/metrics.ts";
import { authRoutes } from "./routes/auth.ts";
import { accountRoutes } from "./routes/account.ts";
import { knowledgeBaseRoutes } from "./routes/knowledge-bases.ts";
import { usageRoutes } from "./routes/usage.ts";
import { requestRoutes } from "./routes/requests.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { requestLogging } from "./request-log.ts";
import { documentRoutes } from "./routes/documents.ts";
import { searchRoutes } from "./routes/search.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";

export function createApp(ctx: AppContext) {
  const v1 = new Elysia({ prefix: "/v1" }).use(accountRoutes(ctx)).use(knowledgeBaseRoutes(ctx)).use(documentRoutes(ctx)).use(searchRoutes(ctx)).use(usageRoutes(ctx)).use(requestRoutes(ctx));

  const api = new Elysia({ prefix: "/api" })
    .onRequest(({ request, set }) => {
      set.headers["x-request-id"] = startRequest(request).id;
      // Answers carry API keys, tokens and customers' text: no cache may keep them, no browser sniff them.
      set.headers["cache-control"] = "no-store";
      set.headers["x-content-type-options"] = "nosniff";
      // Every /api answer is JSON unless its route says otherwise (metrics, the docs page). Plain, without Bun's
      // ";charset=utf-8": JSON is UTF-8 by definition (RFC 8259 defines no charset parameter), and a client
      // comparing the header with "application/json" finds it.
      if (/^\/api(\/|$)/.test(requestPath(request))) set.headers["content-type"] = "application/json"; // the hook runs for every path
    })
    .use(errorHandler)
    .use(requestLogging(ctx))
    .use(requestGate(ctx)) // before bodyHandling: 401 and 429 come before a too-large body's 400
    .use(bodyHandling)
    .use(openapiRoute(ctx.version))
    .get("/docs", docsPage, { detail: { hide: true } })
    .use(healthRoutes(ctx))
    .use(metricsRoutes(ctx))
    .use(authRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(v1);

  // Every route's handler is generated before listening rather than at its first request: the first
  // request after a start took 60-90 ms instead of 16-31 (the first search 145-150 ms instead of 100-113),
  // for 60-70 ms more before listening.
  return new Elysia({ precompile: true }).use(api).use(dashboardRoutes);
}

export type App = ReturnType<typeof createApp>;
