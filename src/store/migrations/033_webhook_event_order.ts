import type { Migration } from "./migration.ts";

// What a webhook event is about and when it happened, so that one delivered late (Standard Webhooks does
// not keep order) never overrides a newer one, and an ended subscription is never revived by a retry.
export const webhookEventOrder: Migration = {
  version: 33,
  name: "webhook event order",
  sql: `
ALTER TABLE webhook_events ADD COLUMN subscription_id TEXT;
ALTER TABLE webhook_events ADD COLUMN event_at TEXT;
`,
};
