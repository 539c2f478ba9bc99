import type { Migration } from "./migration.ts";

// Every verified payment-webhook delivery, keyed by its webhook-id so a redelivery is never applied twice.
export const webhookEvents: Migration = {
  version: 32,
  name: "webhook events",
  sql: `
CREATE TABLE webhook_events (
  id TEXT PRIMARY KEY,
  event_type TEXT NOT NULL,
  account_id TEXT,
  outcome TEXT NOT NULL,
  payload TEXT NOT NULL,
  received_at TEXT NOT NULL
);
CREATE INDEX webhook_events_account ON webhook_events(account_id, received_at);
`,
};
