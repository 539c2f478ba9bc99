// Verified payment-webhook deliveries, by webhook-id: the record of what each did, and the guard that
// applies a redelivered event only once.
import type { Db } from "./db.ts";

export interface WebhookEventRecord {
  id: string;
  eventType: string;
  accountId: string | null;
  outcome: string;
  payload: string;
  receivedAt: Date;
}

export function webhookEventSeen(db: Db, id: string): boolean {
  return db.query<{ one: number }, [string]>("SELECT 1 AS one FROM webhook_events WHERE id = ?").get(id) !== null;
}

export function recordWebhookEvent(db: Db, event: WebhookEventRecord): void {
  db.query(
    "INSERT INTO webhook_events (id, event_type, account_id, outcome, payload, received_at) VALUES (?, ?, ?, ?, ?, ?)",
  ).run(event.id, event.eventType, event.accountId, event.outcome, event.payload, event.receivedAt.toISOString());
}
