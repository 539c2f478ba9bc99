// The billing columns of an account: plan, trial end, billing-period anchor, payment-provider ids.
import type { Db } from "./db.ts";
import type { AccountRow } from "./accounts.ts";
import type { PlanName } from "../billing/plans.ts";

export function findAccountByCustomerId(db: Db, customerId: string): AccountRow | null {
  return db.query<AccountRow, [string]>("SELECT * FROM accounts WHERE customer_id = ? ORDER BY id LIMIT 1").get(customerId);
}

export interface AccountPlanUpdate {
  plan: PlanName;
  trialEndsAt: string;
  periodAnchor: string;
  subscriptionId: string | null;
  customerId: string | null;
}

export function updateAccountPlan(db: Db, accountId: string, update: AccountPlanUpdate, now: Date): void {
  db.query(
    `UPDATE accounts SET plan = ?, trial_ends_at = ?, period_anchor = ?, subscription_id = ?, customer_id = ?, updated_at = ?
     WHERE id = ?`,
  ).run(update.plan, update.trialEndsAt, update.periodAnchor, update.subscriptionId, update.customerId, now.toISOString(), accountId);
}
