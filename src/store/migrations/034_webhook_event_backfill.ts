import type { Migration } from "./migration.ts";

// Migration 33 added the subscription and the time of each webhook event but left them empty on the events
// already recorded, so after an upgrade a late retry of an event from before it could revive a cancelled
// subscription. Both are read back from the stored payload (its data.subscription_id and timestamp, the
// latter as the ISO instant in UTC that billing/webhook.ts records). Events recorded since then keep theirs.
export const webhookEventBackfill: Migration = {
  version: 34,
  name: "webhook event backfill",
  sql: `
UPDATE webhook_events
SET subscription_id = COALESCE(subscription_id, json_extract(payload, '$.data.subscription_id')),
    event_at = COALESCE(event_at, strftime('%Y-%m-%dT%H:%M:%fZ', json_extract(payload, '$.timestamp')))
WHERE (subscription_id IS NULL OR event_at IS NULL) AND json_valid(payload);
`,
};
