// The usage record of GET /v1/usage (service spec §2.6): the current billing period, the plan's monthly
// allowances and what has been used of them.
import type { Db } from "../store/db.ts";
import type { AccountRow } from "../store/accounts.ts";
import { accountPlan } from "./limits.ts";
import { usageFor } from "./usage.ts";
import type { PlanName } from "./plans.ts";

export interface UsageRecord {
  current_period_start: string;
  current_period_end: string;
  plan: PlanName;
  limits: { pages_processed: number; search_queries: number };
  usage: { pages_processed: number; search_queries: number };
  percentage_consumed: { pages: number; queries: number };
}

/** Whole percent, rounded down: 100 only once the allowance is fully used. Above 100 only with limits off. */
export function percentOf(used: number, allowance: number): number {
  return allowance > 0 ? Math.floor((100 * used) / allowance) : 0;
}

export function usageRecord(db: Db, account: AccountRow, now: Date): UsageRecord {
  const plan = accountPlan(account);
  const { period, pages_processed, search_queries } = usageFor(db, account, now);
  return {
    current_period_start: period.start.toISOString(),
    current_period_end: period.end.toISOString(),
    plan: plan.name,
    limits: { pages_processed: plan.pagesPerMonth, search_queries: plan.searchQueriesPerMonth },
    usage: { pages_processed, search_queries },
    percentage_consumed: {
      pages: percentOf(pages_processed, plan.pagesPerMonth),
      queries: percentOf(search_queries, plan.searchQueriesPerMonth),
    },
  };
}
