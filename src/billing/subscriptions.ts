// How a payment provider's subscription events move an account between plans (service spec §6.1).
// A pure decision: given the account and the event, the new billing columns (or none) and an outcome
// that is recorded with the event.
import type { AccountRow } from "../store/accounts.ts";
import type { AccountPlanUpdate } from "../store/account-plans.ts";
import type { AccountEventHistory } from "../store/webhook-events.ts";
import { planForProduct } from "./plans.ts";

export interface SubscriptionEvent {
  type: string;
  subscriptionId: string | null;
  customerId: string | null;
  productId: string | null;
  /** data.status as sent (active, trialing, canceled…), null when absent. */
  status: string | null;
  /** The event's time (payload timestamp) as an ISO instant in UTC; null when it has none. */
  occurredAt: string | null;
}

export type SubscriptionOutcome =
  | "subscription_started"
  | "plan_changed"
  | "plan_unchanged"
  | "subscription_ended"
  | "already_on_trial"
  | "stale_subscription"
  | "out_of_order"
  | "ended_subscription"
  | "other_subscription"
  | "unknown_product"
  | "unknown_event";

/**
 * Outcomes of events that tell their own subscription's state, whether or not they changed the account: the
 * ones applied to it, and the end of a subscription the account had already left (or never had) — that
 * subscription is over all the same, and a late retry of it must find it so.
 */
export const SUBSCRIPTION_OUTCOMES: readonly SubscriptionOutcome[] = [
  "subscription_started",
  "plan_changed",
  "plan_unchanged",
  "subscription_ended",
  "stale_subscription",
  "already_on_trial",
];
/** Those of them that end their subscription. */
export const END_OUTCOMES: readonly SubscriptionOutcome[] = ["subscription_ended", "stale_subscription", "already_on_trial"];

/** Events that set the plan from data.product_id. */
export const PLAN_EVENTS = ["subscription.created", "subscription.active", "subscription.updated"];
/** Those that start a subscription; an update of one the account does not hold does not move it there while its own runs. */
export const STARTING_EVENTS = ["subscription.created", "subscription.active"];
/** data.status values of a subscription that is over or never began (Stripe's and Polar's names): such a plan event ends it. */
export const INACTIVE_STATUSES = ["canceled", "cancelled", "revoked", "ended", "incomplete_expired", "unpaid"];
/** Events that return the account to the trial plan's allowances, with the trial over. */
export const END_EVENTS = ["subscription.canceled", "subscription.cancelled", "subscription.revoked"];

export interface SubscriptionDecision {
  outcome: SubscriptionOutcome;
  update: AccountPlanUpdate | null;
}

function current(account: AccountRow): AccountPlanUpdate {
  return {
    plan: account.plan as AccountPlanUpdate["plan"],
    trialEndsAt: account.trial_ends_at,
    periodAnchor: account.period_anchor,
    subscriptionId: account.subscription_id,
    customerId: account.customer_id,
  };
}

/**
 * A subscription starts (a trial account subscribes, or a new subscription id appears): the plan is set
 * and a new billing period begins now, so usage starts from zero. A change of product on the same
 * subscription (upgrade, downgrade) keeps the period and its usage; the new allowances apply at once.
 */
function setPlan(account: AccountRow, event: SubscriptionEvent, now: Date): SubscriptionDecision {
  const plan = event.productId ? planForProduct(event.productId) : null;
  if (!plan) return { outcome: "unknown_product", update: null };
  const subscriptionId = event.subscriptionId ?? account.subscription_id;
  const starts = account.plan === "trial" || subscriptionId !== account.subscription_id;
  return {
    outcome: starts ? "subscription_started" : plan === account.plan ? "plan_unchanged" : "plan_changed",
    update: {
      ...current(account),
      plan,
      periodAnchor: starts ? now.toISOString() : account.period_anchor,
      subscriptionId,
      customerId: event.customerId ?? account.customer_id,
    },
  };
}

/**
 * The subscription is over: back to the trial plan's allowances, with the trial already expired, so the
 * account can read its data but not ingest or search until it subscribes again. This holds for an account
 * still in its trial too (its trial ends now). An event for another subscription than the account's current
 * one changes nothing (it would cancel the wrong subscription).
 */
function endSubscription(account: AccountRow, event: SubscriptionEvent, now: Date): SubscriptionDecision {
  const trialEndsAt = new Date(account.trial_ends_at).getTime();
  if (account.plan === "trial" && trialEndsAt <= now.getTime()) return { outcome: "already_on_trial", update: null };
  if (event.subscriptionId && account.subscription_id && event.subscriptionId !== account.subscription_id) {
    return { outcome: "stale_subscription", update: null };
  }
  return {
    outcome: "subscription_ended",
    update: {
      ...current(account),
      plan: "trial",
      trialEndsAt: new Date(Math.min(trialEndsAt, now.getTime())).toISOString(),
      subscriptionId: account.subscription_id ?? event.subscriptionId,
      customerId: account.customer_id ?? event.customerId,
    },
  };
}

/**
 * Deliveries come in any order and are retried for hours (Standard Webhooks), so each subscription's events
 * apply in the order of their times: one older than an event already taken for its subscription (applied, or
 * ending a subscription the account had left) changes nothing (a late 'updated' would undo a newer change, or
 * revive a cancelled plan and restart its period). Events without a time apply in delivery order.
 *
 * A plan event whose data.status says the subscription is over (canceled, revoked…) is taken as its end.
 * An ended subscription comes back only by a plan event dated after its end: a provider's reactivation. For
 * the account's current subscription one that it cannot be dated against (it or the end untimed) reopens it
 * too, in delivery order (the issue sets the plan on every plan event); for another, such an event cannot be
 * told from a late retry and is ignored.
 *
 * A plan event for another subscription than the account's current one moves the account to it unless it is
 * older than the current one's latest start (created, active), ended or not (a retry from before the account
 * moved to it; a new subscription's activation sent just before the old one's update or cancellation is newer
 * than that one's start), or it is an update while the current one runs (an old subscription's update, such
 * as its cancellation being scheduled, does not take the account off the one it pays for now).
 */
export function decideSubscriptionEvent(account: AccountRow, event: SubscriptionEvent, now: Date, history: AccountEventHistory): SubscriptionDecision {
  const planType = PLAN_EVENTS.includes(event.type);
  if (!planType && !END_EVENTS.includes(event.type)) return { outcome: "unknown_event", update: null };
  // A plan event whose data.status says the subscription is over (an update sent with its cancellation) ends it.
  const isPlanEvent = planType && !INACTIVE_STATUSES.includes(event.status ?? "");
  const olderThan = (at: string | null) => event.occurredAt !== null && at !== null && event.occurredAt < at;
  if (olderThan(history.own.latestEventAt)) return { outcome: "out_of_order", update: null };
  if (!isPlanEvent) return endSubscription(account, event, now);
  const current = (event.subscriptionId ?? account.subscription_id) === account.subscription_id;
  if (history.own.ended) {
    const { endedAt } = history.own;
    const datedAfterEnd = event.occurredAt !== null && endedAt !== null && event.occurredAt > endedAt;
    // Without both times, delivery order decides, as for any untimed event: only for the current subscription.
    const untimed = event.occurredAt === null || endedAt === null;
    if (!(datedAfterEnd || (current && untimed))) return { outcome: "ended_subscription", update: null };
  }
  if (!current) {
    if (olderThan(history.current.latestStartAt)) return { outcome: "out_of_order", update: null };
    if (!STARTING_EVENTS.includes(event.type) && !history.current.ended && account.subscription_id !== null) {
      return { outcome: "other_subscription", update: null };
    }
  }
  return setPlan(account, event, now);
}
