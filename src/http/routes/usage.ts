// GET /v1/usage (service spec §2.6).
import { Elysia } from "elysia";
import { z } from "zod";
import type { AppContext } from "../context.ts";
import { authenticated } from "../auth.ts";
import { dataOf, errorResponses, V1_ERRORS, Timestamp, Count } from "../schemas.ts";
import { PLAN_NAMES } from "../../billing/plans.ts";
import { usageRecord } from "../../billing/usage-record.ts";

const UsageSchema = z.object({
  current_period_start: Timestamp,
  current_period_end: Timestamp,
  plan: z.enum(PLAN_NAMES),
  limits: z.object({ pages_processed: Count, search_queries: Count }),
  usage: z.object({ pages_processed: Count, search_queries: Count }),
  percentage_consumed: z.object({ pages: Count, queries: Count }),
});

export function usageRoutes(ctx: AppContext) {
  return new Elysia().use(authenticated(ctx)).get("/usage", ({ principal }) => ({ data: usageRecord(ctx.db, principal.account, ctx.clock.now()) }), {
    response: { 200: dataOf(UsageSchema) },
    detail: {
      operationId: "getUsage", summary: "Usage in the current billing period",
      description: [
        "Billing periods are monthly, anchored at signup, or at the start of the paid subscription once there is one",
        "(a period starting on the 31st starts on the last day of shorter months). Both counters start at 0 with each period.",
        "pages_processed counts the pages of documents that finished processing (rich documents their real pages,",
        "text-based files one page per 2,400 bytes, rounded up); search_queries counts search calls.",
        "percentage_consumed is a whole percent rounded down, so 100 means the allowance is used up;",
        "it passes 100 when usage goes beyond the allowance: with QUARRY_LIMITS=off (usage is still counted), or after a move",
        "to a plan whose allowance is below what the period has already used.",
      ].join(" "),
      tags: ["Usage"],
      responses: errorResponses(...V1_ERRORS),
    },
  });
}
