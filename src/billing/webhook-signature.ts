// Standard Webhooks verification of the payment webhook (https://www.standardwebhooks.com): HMAC-SHA256
// over "{webhook-id}.{webhook-timestamp}.{raw body}" with the whsec_ secret, any of several space-separated
// "v1,<base64>" signatures, constant-time comparison, timestamps more than 5 minutes off rejected.
import { Webhook } from "standardwebhooks";
import { QuarryError } from "../errors.ts";

export const INVALID_WEBHOOK_SIGNATURE = "Invalid webhook signature";

export class WebhookVerifier {
  private readonly webhook: Webhook | null;

  /** @param secret "whsec_" + base64 key, as loadConfig checked it; null rejects every delivery. */
  constructor(secret: string | null) {
    this.webhook = secret ? new Webhook(secret) : null;
  }

  /** Checks the signature of the exact raw body; returns the delivery's webhook-id, or throws 401. */
  verify(rawBody: string, headers: Headers): string {
    const signed = {
      "webhook-id": headers.get("webhook-id") ?? "",
      "webhook-timestamp": headers.get("webhook-timestamp") ?? "",
      "webhook-signature": headers.get("webhook-signature") ?? "",
    };
    try {
      if (!this.webhook) throw new Error("no webhook secret configured");
      this.webhook.verify(rawBody, signed, { jsonParse: false });
    } catch {
      throw new QuarryError("AUTHENTICATION_ERROR", INVALID_WEBHOOK_SIGNATURE);
    }
    return signed["webhook-id"];
  }
}
