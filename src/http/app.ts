// The HTTP application: everything under /api. Routes stay thin; the work happens in the domain modules.
import { Elysia } from "elysia";
import type { AppContext } from "./context.ts";
import { errorHandler } from "./errors.ts";
import { bodyHandling } from "./body.ts";
import { startRequest } from "./request-state.ts";
import { openapiPlugin } from "./openapi.ts";
import { docsPage } from "./docs-page.ts";
import { healthRoutes } from "./routes/health.ts";
import { authRoutes } from "./routes/auth.ts";
import { accountRoutes } from "./routes/account.ts";
import { knowledgeBaseRoutes } from "./routes/knowledge-bases.ts";
import { documentRoutes } from "./routes/documents.ts";

export function createApp(ctx: AppContext) {
  const v1 = new Elysia({ prefix: "/v1" }).use(accountRoutes(ctx)).use(knowledgeBaseRoutes(ctx)).use(documentRoutes(ctx));

  return new Elysia({ prefix: "/api" })
    .onRequest(({ request, set }) => {
      set.headers["x-request-id"] = startRequest(request).id;
    })
    .use(errorHandler)
    .use(bodyHandling)
    .use(openapiPlugin(ctx.version))
    .get("/docs", docsPage, { detail: { hide: true } })
    .use(healthRoutes(ctx))
    .use(authRoutes(ctx))
    .use(v1);
}

export type App = ReturnType<typeof createApp>;
