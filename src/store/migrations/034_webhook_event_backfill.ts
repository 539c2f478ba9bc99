import type { Migration } from "./migration.ts";
import { utcIso } from "../../iso-time.ts";

interface Row {
  rowid: number;
  account_id: string | null;
  subscription_id: string | null;
  event_at: string | null;
  outcome: string;
  payload: string;
}

function payloadOf(raw: string): { timestamp?: unknown; data?: { subscription_id?: unknown } } | null {
  try {
    return JSON.parse(raw.replace(/^\uFEFF/, ""));
  } catch {
    return null;
  }
}

// Migration 33 added the subscription and the time of each webhook event but left them empty on the events
// already recorded, so after an upgrade a late retry of an event from before it could revive a cancelled
// subscription. Both are read back from the stored payload as the webhook route reads them (timestamps in
// every form it takes: "+0100", a space, lowercase "t"/"z"). An end event sent without a subscription id
// ended the account's subscription of the time: its current one stands in (a subscription it moved to later
// started after that end, so its order is unchanged). Events recorded since migration 33 keep theirs.
export const webhookEventBackfill: Migration = {
  version: 34,
  name: "webhook event backfill",
  apply(db) {
    const rows = db.query<Row, []>("SELECT rowid, account_id, subscription_id, event_at, outcome, payload FROM webhook_events WHERE subscription_id IS NULL OR event_at IS NULL").all();
    const currentSubscription = db.query<{ subscription_id: string | null }, [string]>("SELECT subscription_id FROM accounts WHERE id = ?");
    const update = db.query("UPDATE webhook_events SET subscription_id = ?, event_at = ? WHERE rowid = ?");
    for (const row of rows) {
      const payload = payloadOf(row.payload);
      if (!payload) continue;
      const sent = typeof payload.data?.subscription_id === "string" ? payload.data.subscription_id : null;
      const ended = row.outcome === "subscription_ended" && row.account_id !== null ? (currentSubscription.get(row.account_id)?.subscription_id ?? null) : null;
      const at = typeof payload.timestamp === "string" ? utcIso(payload.timestamp) : null;
      update.run(row.subscription_id ?? sent ?? ended, row.event_at ?? at, row.rowid);
    }
  },
};
