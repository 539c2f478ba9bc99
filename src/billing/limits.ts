// Which plan's numbers apply to an account right now, and whether limits are enforced at all
// (QUARRY_LIMITS=off turns every allowance, count and rate limit off; usage is still metered).
import { planOf, type Plan } from "./plans.ts";
import type { AccountRow } from "../store/accounts.ts";

export function accountPlan(account: AccountRow): Plan {
  return planOf(account.plan);
}

/** The cap to enforce, or null when limits are off. */
export function enforcedLimit(limitsEnabled: boolean, account: AccountRow, pick: (plan: Plan) => number): number | null {
  return limitsEnabled ? pick(accountPlan(account)) : null;
}
