// Sends payment-webhook deliveries signed per Standard Webhooks, the way a payment provider would.
import { Webhook } from "standardwebhooks";
import type { TestServer } from "../helpers/server.ts";

export function newWebhookSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;
}

export interface Delivery {
  id?: string;
  /** Unix seconds; default now. */
  timestamp?: number;
  signWith?: string;
  /** Replaces the signature header, given the valid one. */
  signature?: (valid: string) => string;
  /** Sent instead of the signed body. */
  sentBody?: string;
}

let deliveries = 0;

export async function deliverWebhook(server: TestServer, secret: string, payload: unknown, options: Delivery = {}) {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const id = options.id ?? `msg_${Date.now()}_${deliveries++}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const valid = new Webhook(options.signWith ?? secret).sign(id, new Date(timestamp * 1000), body);
  const res = await fetch(`${server.url}/webhooks/payments`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": options.signature ? options.signature(valid) : valid,
    },
    body: options.sentBody ?? body,
  });
  return { status: res.status, body: await res.json(), id };
}

/** A subscription event for the account (found by metadata.account_id), product prod_pro unless given. */
export function subscriptionEvent(event: string, accountId: string, data: Record<string, unknown> = {}) {
  return {
    event,
    timestamp: new Date().toISOString(),
    data: { subscription_id: "sub_1", customer_id: `cus_${accountId}`, product_id: "prod_pro", status: "active", metadata: { account_id: accountId }, ...data },
  };
}
