// Verified payment-webhook deliveries, by webhook-id: the record of what each did, and the guard that
// applies a redelivered event only once.
import type { Db } from "./db.ts";

export interface WebhookEventRecord {
  id: string;
  eventType: string;
  accountId: string | null;
  subscriptionId: string | null;
  /** The event's own time (its payload's timestamp) as an ISO instant in UTC, when it has one. */
  eventAt: string | null;
  outcome: string;
  payload: string;
  receivedAt: Date;
}

/** What the account's applied events say about a new one (see billing/subscriptions.ts). */
export interface AccountEventHistory {
  /** The latest event time among the events applied to the account (ISO instants in UTC compare as text). */
  latestEventAt: string | null;
  /** Whether the subscription has been ended by an applied event. */
  subscriptionEnded: boolean;
}

export function accountEventHistory(db: Db, accountId: string, subscriptionId: string | null, appliedOutcomes: readonly string[], endedOutcome: string): AccountEventHistory {
  const applied = appliedOutcomes.map(() => "?").join(", ");
  const latest = db
    .query<{ at: string | null }, string[]>(`SELECT MAX(event_at) AS at FROM webhook_events WHERE account_id = ? AND outcome IN (${applied})`)
    .get(accountId, ...appliedOutcomes)!.at;
  const ended =
    subscriptionId !== null &&
    db.query<{ one: number }, [string, string, string]>("SELECT 1 AS one FROM webhook_events WHERE account_id = ? AND subscription_id = ? AND outcome = ?").get(accountId, subscriptionId, endedOutcome) !== null;
  return { latestEventAt: latest, subscriptionEnded: ended };
}

export function webhookEventSeen(db: Db, id: string): boolean {
  return db.query<{ one: number }, [string]>("SELECT 1 AS one FROM webhook_events WHERE id = ?").get(id) !== null;
}

export function recordWebhookEvent(db: Db, event: WebhookEventRecord): void {
  db.query(
    "INSERT INTO webhook_events (id, event_type, account_id, subscription_id, event_at, outcome, payload, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  ).run(event.id, event.eventType, event.accountId, event.subscriptionId, event.eventAt, event.outcome, event.payload, event.receivedAt.toISOString());
}
