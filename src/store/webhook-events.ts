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

/** What the recorded events of one of the account's subscriptions say about a new event. */
export interface SubscriptionHistory {
  /** The latest event time among them (ISO instants in UTC compare as text). */
  latestEventAt: string | null;
  /** The latest time among those that started it (created, active): when the account last moved to it. */
  latestStartAt: string | null;
  /** Whether the last of them ended the subscription (a plan event after an end reopens it). */
  ended: boolean;
  /** That end's time, when it ended and the end had one. */
  endedAt: string | null;
}

/** What the account's recorded events say about a new one (see billing/subscriptions.ts). */
export interface AccountEventHistory {
  /** The event's own subscription (its data.subscription_id, else the account's current one). */
  own: SubscriptionHistory;
  /** The account's current subscription. */
  current: SubscriptionHistory;
}

/** Which recorded events say what: outcomes that tell their subscription's state, those of them that end it, and the event types that start it. */
export interface EventKinds {
  counted: readonly string[];
  ending: readonly string[];
  starting: readonly string[];
}

function subscriptionHistory(db: Db, accountId: string, subscriptionId: string | null, kinds: EventKinds): SubscriptionHistory {
  const counted = kinds.counted.map(() => "?").join(", ");
  // IS rather than =: events recorded while the account had no subscription id are a subscription of their own.
  // Events are decided in the order they are recorded, so the last one recorded (rowid) says whether it has ended.
  const where = `account_id = ? AND subscription_id IS ? AND outcome IN (${counted})`;
  const args = [accountId, subscriptionId, ...kinds.counted];
  const starting = kinds.starting.map(() => "?").join(", ");
  const ending = kinds.ending.map(() => "?").join(", ");
  const latest = db
    .query<{ at: string | null; start_at: string | null }, (string | null)[]>(
      `SELECT MAX(event_at) AS at, MAX(CASE WHEN event_type IN (${starting}) AND outcome NOT IN (${ending}) THEN event_at END) AS start_at FROM webhook_events WHERE ${where}`,
    )
    .get(...kinds.starting, ...kinds.ending, ...args)!;
  const last = db
    .query<{ outcome: string; event_at: string | null }, (string | null)[]>(`SELECT outcome, event_at FROM webhook_events WHERE ${where} ORDER BY rowid DESC LIMIT 1`)
    .get(...args);
  const ended = last !== null && kinds.ending.includes(last.outcome);
  return { latestEventAt: latest.at, latestStartAt: latest.start_at, ended, endedAt: ended ? last.event_at : null };
}

export function accountEventHistory(
  db: Db,
  accountId: string,
  subscriptionIds: { own: string | null; current: string | null },
  kinds: EventKinds,
): AccountEventHistory {
  const own = subscriptionHistory(db, accountId, subscriptionIds.own, kinds);
  const current = subscriptionIds.current === subscriptionIds.own ? own : subscriptionHistory(db, accountId, subscriptionIds.current, kinds);
  return { own, current };
}

export function webhookEventSeen(db: Db, id: string): boolean {
  return db.query<{ one: number }, [string]>("SELECT 1 AS one FROM webhook_events WHERE id = ?").get(id) !== null;
}

export function recordWebhookEvent(db: Db, event: WebhookEventRecord): void {
  db.query(
    "INSERT INTO webhook_events (id, event_type, account_id, subscription_id, event_at, outcome, payload, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  ).run(event.id, event.eventType, event.accountId, event.subscriptionId, event.eventAt, event.outcome, event.payload, event.receivedAt.toISOString());
}
