import { Elysia } from "elysia";
import { z } from "zod";
import type { AppContext } from "../context.ts";

export function healthRoutes(ctx: AppContext) {
  return new Elysia().get(
    "/health",
    () => ({ status: "ok" as const, version: ctx.version, models: ctx.models.description }),
    {
      response: {
        200: z.object({ status: z.literal("ok"), version: z.string(), models: z.record(z.string(), z.unknown()) }),
      },
      detail: { summary: "Service health and the models in use", tags: ["Service"], security: [] },
    },
  );
}
