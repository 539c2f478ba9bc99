import { Elysia } from "elysia";
import { z } from "zod";
import type { AppContext } from "../context.ts";
import { Count } from "../schemas.ts";

export function healthRoutes(ctx: AppContext) {
  return new Elysia().get(
    "/health",
    () => ({ status: "ok" as const, version: ctx.version, models: ctx.models.description }),
    {
      response: {
        200: z.object({
          status: z.literal("ok"),
          version: z.string(),
          models: z.object({
            embedding: z.object({ id: z.string(), dimension: Count, max_tokens: Count }),
            reranker: z.object({ id: z.string() }).nullable(),
            reranking_hint: z.string().nullable(),
          }),
        }),
      },
      detail: {
        operationId: "getHealth", summary: "Service health and the models in use",
        description:
          "No authentication. models.embedding.max_tokens is the longest text embedded whole; reranker is null when no " +
          "cross-encoder is installed, and reranking_hint then says how to install one.",
        tags: ["Service"],
        security: [],
      },
    },
  );
}
