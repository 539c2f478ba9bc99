// Applies a verified payment-webhook delivery: once per webhook-id, to the account it names, recording
// what it did. Everything happens in one write transaction, so concurrent redeliveries apply once.
import type { Db } from "../store/db.ts";
import { writeTx } from "../store/db.ts";
import { findAccountByEmail, findAccountById, type AccountRow } from "../store/accounts.ts";
import { findAccountByCustomerId, updateAccountPlan } from "../store/account-plans.ts";
import { accountEventHistory, recordWebhookEvent, webhookEventSeen } from "../store/webhook-events.ts";
import { decideSubscriptionEvent, END_OUTCOMES, STARTING_EVENTS, SUBSCRIPTION_OUTCOMES, type SubscriptionEvent, type SubscriptionOutcome } from "./subscriptions.ts";

export interface PaymentWebhookDelivery {
  /** The webhook-id header. */
  id: string;
  event: SubscriptionEvent;
  /** Who the event is about, tried in this order. */
  accountId: string | null;
  customerEmail: string | null;
  /** The raw body, kept with the record. */
  payload: string;
}

export type WebhookOutcome = SubscriptionOutcome | "duplicate" | "no_account";

export interface WebhookResult {
  outcome: WebhookOutcome;
  accountId: string | null;
}

function findEventAccount(db: Db, delivery: PaymentWebhookDelivery): AccountRow | null {
  return (
    (delivery.accountId ? findAccountById(db, delivery.accountId) : null) ??
    (delivery.customerEmail ? findAccountByEmail(db, delivery.customerEmail) : null) ??
    (delivery.event.customerId ? findAccountByCustomerId(db, delivery.event.customerId) : null)
  );
}

/** What is known of the event's subscription (its own id, else the account's current one) and of the current one. */
function eventHistory(db: Db, account: AccountRow, event: SubscriptionEvent) {
  const subscriptions = { own: event.subscriptionId ?? account.subscription_id, current: account.subscription_id };
  return accountEventHistory(db, account.id, subscriptions, { counted: SUBSCRIPTION_OUTCOMES, ending: END_OUTCOMES, starting: STARTING_EVENTS });
}

export function receivePaymentWebhook(db: Db, delivery: PaymentWebhookDelivery, now: Date): WebhookResult {
  return writeTx(db, () => {
    if (webhookEventSeen(db, delivery.id)) return { outcome: "duplicate", accountId: null };
    const account = findEventAccount(db, delivery);
    const { event } = delivery;
    const decision = account
      ? decideSubscriptionEvent(account, event, now, eventHistory(db, account, event))
      : { outcome: "no_account" as const, update: null };
    if (account && decision.update) updateAccountPlan(db, account.id, decision.update, now);
    recordWebhookEvent(db, {
      id: delivery.id,
      eventType: event.type,
      accountId: account?.id ?? null,
      // The subscription the event acted on: an end event without an id ends the account's current one,
      // which a late plan event for that subscription must then find ended.
      subscriptionId: decision.update?.subscriptionId ?? event.subscriptionId,
      eventAt: event.occurredAt,
      outcome: decision.outcome,
      payload: delivery.payload,
      receivedAt: now,
    });
    return { outcome: decision.outcome, accountId: account?.id ?? null };
  });
}
