// POST /webhooks/payments: subscription events from the payment provider (service spec §4.6, §6.1).
// The signature covers the exact bytes sent, so this route reads the raw body itself (see body.ts).
import { Elysia } from "elysia";
import { z } from "zod";
import type { AppContext } from "../context.ts";
import { requestState } from "../request-state.ts";
import { maxBodyBytes, readBytes } from "../body.ts";
import { perClientErrorResponses } from "../schemas.ts";
import { parseWith } from "../validation.ts";
import { validationError } from "../../errors.ts";
import { WebhookVerifier } from "../../billing/webhook-signature.ts";
import { receivePaymentWebhook } from "../../billing/webhook.ts";
import { END_EVENTS, INACTIVE_STATUSES, PLAN_EVENTS, STARTING_EVENTS } from "../../billing/subscriptions.ts";
import { PLAN_BY_PRODUCT_ID } from "../../billing/plans.ts";
import { isIsoDateTime, isoInstant } from "../../iso-time.ts";

const optionalString = z.string().nullish();

/** A Unix time from this on is in milliseconds (in seconds it would be the year 5138). */
const UNIX_MILLISECONDS_FROM = 1e11;
/** The end of the year 9999: event times are compared as ISO strings, which sort by time only up to there. */
const MAX_UNIX_MILLISECONDS = 253_402_300_799_999;
/** Unix time written as a string, as the webhook-timestamp header writes it. */
const UNIX_TIME_TEXT = /^[0-9]{1,15}(\.[0-9]+)?$/;
const TIMESTAMP_RULE = "must be an ISO 8601 date-time, e.g. 2026-11-26T12:00:00Z, or Unix time in seconds or milliseconds (up to the year 9999)";

/** The event's time as an ISO instant in UTC, or null when `timestamp` is no time. */
function eventTime(timestamp: string | number): string | null {
  let milliseconds: number;
  if (typeof timestamp === "string" && !UNIX_TIME_TEXT.test(timestamp)) {
    // An ISO time of the year 9999 with a negative offset is in the year 10000 in UTC.
    milliseconds = isIsoDateTime(timestamp) ? isoInstant(timestamp)! : NaN;
  } else {
    const unix = Number(timestamp);
    milliseconds = unix < 0 ? NaN : unix < UNIX_MILLISECONDS_FROM ? unix * 1000 : unix;
  }
  return milliseconds <= MAX_UNIX_MILLISECONDS ? new Date(milliseconds).toISOString() : null; // NaN fails it
}

const WebhookPayload = z.looseObject({
  event: z.string().min(1).describe("Event type, e.g. subscription.active"),
  // Checked as filter dates are (iso-time.ts), leniently: '+0000' offsets and a space for the T are accepted.
  // Providers that send Unix time (as in the webhook-timestamp header) are read too.
  timestamp: z
    .union([z.string(), z.number()], { error: TIMESTAMP_RULE })
    .refine((timestamp) => eventTime(timestamp) !== null, TIMESTAMP_RULE)
    .nullish()
    .describe(
      "Event time: an ISO 8601 date-time (T or a space; seconds and fraction optional; Z, ±hh:mm, ±hhmm or none: UTC), or Unix time " +
        `as a number or a string of digits, in seconds (below ${UNIX_MILLISECONDS_FROM}) or milliseconds, up to the year 9999; anything else is a 400`,
    ),
  data: z
    .looseObject({
      subscription_id: optionalString,
      customer_id: optionalString,
      customer_email: optionalString,
      product_id: optionalString.describe(`One of ${Object.keys(PLAN_BY_PRODUCT_ID).join(", ")}`),
      status: optionalString,
      metadata: z.looseObject({ account_id: z.unknown().optional() }).nullish(),
    })
    .default({}),
});

function parsePayload(raw: string): z.infer<typeof WebhookPayload> {
  let json: unknown;
  try {
    json = JSON.parse(raw.replace(/^\uFEFF/, "")); // a byte-order mark is signed, but is not JSON
  } catch {
    throw validationError([{ path: [], message: "is not valid JSON" }], "Webhook body is not valid JSON");
  }
  return parseWith(WebhookPayload, json);
}

const DESCRIPTION = [
  "Called by the payment provider only. Verified per the Standard Webhooks specification with QUARRY_WEBHOOK_SECRET",
  "(HMAC-SHA256 over webhook-id.webhook-timestamp.body; several space-separated v1 signatures allowed; timestamps more than",
  "5 minutes off are rejected); a bad or missing signature, or no configured secret, is 401 AUTHENTICATION_ERROR.",
  "A redelivered webhook-id is acknowledged without being applied again.",
  `${PLAN_EVENTS.join(", ")} set the plan from data.product_id (${Object.entries(PLAN_BY_PRODUCT_ID).map(([p, n]) => `${p} → ${n}`).join(", ")});`,
  "a new subscription starts a new billing period (usage from zero), a product change on the same subscription keeps the period.",
  `${END_EVENTS.join(", ")} return the account to the trial plan's allowances with the trial over, also for an account still in its trial (reads keep working);`,
  "an end event for a subscription other than the account's current one is ignored (an account without one, still in its trial,",
  "has its trial ended whatever the id); an end event without data.subscription_id ends the current one.",
  "Deliveries may come in any order, so each subscription's events apply in the order of their timestamps: an event older than",
  "one already taken for its subscription (data.subscription_id, else the account's current one; taken: applied to the account, or an end",
  "event for a subscription the account had left) is ignored (recorded as out_of_order). Events without a timestamp apply in the order they arrive.",
  `A plan event whose data.status is ${INACTIVE_STATUSES.join(", ")} is taken as an end event.`,
  "An ended subscription comes back only by a plan event dated after its end (a reactivation; the plan is set and a new billing period",
  "starts); for the account's current subscription, one that cannot be dated against the end (it or the end has no timestamp) reopens it",
  "too, in delivery order. Any other plan event for an ended subscription is ignored (ended_subscription).",
  "A plan event for another subscription than the account's current one moves the account to it, unless it is older than the current",
  `subscription's latest ${STARTING_EVENTS.join(" or ")}, ended or not (out_of_order: the account moved on after it), or it is`,
  "a subscription.updated while the current subscription runs (other_subscription: an old subscription's update, such as its cancellation",
  "being scheduled, leaves the account on the one it pays for). So when a customer switches subscriptions, the new one applies whether its",
  "activation or the old one's later update or cancellation arrives first. The account holds one subscription at a time: if a customer",
  "keeps two and cancels the one the account is on, the account returns to the trial's allowances until the other sends an event; and a",
  "subscription the account reached by an update, before its created or active arrived, can give way to an older subscription's late start.",
  "The account is found by data.metadata.account_id, else data.customer_email, else a data.customer_id seen before.",
  "Unknown events, unknown products and events for no known account are acknowledged and recorded without effect.",
  "The body is read as sent, whatever its Content-Type, and parsed only once its signature holds; a correctly signed body",
  "that is not a JSON object with an event field is 400 VALIDATION_ERROR (data is optional; the nesting limit of the /v1 routes does not apply).",
  "Rate-limited per client IP (429 RATE_LIMIT_EXCEEDED; see Per-client rate limits).",
].join(" ");

export function webhookRoutes(ctx: AppContext) {
  const verifier = new WebhookVerifier(ctx.config.webhookSecret);
  return new Elysia({ prefix: "/webhooks" }).post(
    "/payments",
    ({ body, request }) => {
      const raw = typeof body === "string" ? body : "";
      const webhookId = verifier.verify(raw, request.headers);
      const payload = parsePayload(raw);
      const { data } = payload;
      const accountId = data.metadata?.account_id;
      const state = requestState(request);
      state.requestSummary = { event: payload.event, webhook_id: webhookId };
      const result = receivePaymentWebhook(
        ctx.db,
        {
          id: webhookId,
          event: {
            type: payload.event,
            subscriptionId: data.subscription_id ?? null,
            customerId: data.customer_id ?? null,
            productId: data.product_id ?? null,
            status: data.status ?? null,
            occurredAt: payload.timestamp != null ? eventTime(payload.timestamp) : null,
          },
          accountId: typeof accountId === "string" ? accountId : null,
          customerEmail: data.customer_email ?? null,
          payload: raw,
        },
        ctx.clock.now(),
      );
      state.responseSummary = { outcome: result.outcome, ...(result.accountId ? { account_id: result.accountId } : {}) };
      return { received: true as const };
    },
    {
      // A body over the limit is reported after the route is matched, like every unreadable body (body.ts).
      // Decoded by Buffer, which keeps a byte-order mark (TextDecoder drops it), so that the text the
      // signature is checked over encodes back to the bytes that were signed.
      parse: async ({ request }) => {
        const raw = await readBytes(request, maxBodyBytes(request));
        if (raw instanceof Uint8Array) return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("utf8");
        requestState(request).bodyError = raw;
        return "";
      },
      response: { 200: z.object({ received: z.literal(true) }) },
      detail: {
        operationId: "receivePaymentWebhook", summary: "Payment provider webhook (subscription events)",
        description: DESCRIPTION,
        tags: ["Webhooks"],
        security: [],
        requestBody: { required: true, content: { "application/json": { schema: z.toJSONSchema(WebhookPayload, { io: "input" }) as never } } },
        parameters: ["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => ({
          in: "header" as const,
          name,
          required: true,
          schema: { type: "string" as const },
        })),
        responses: perClientErrorResponses(400, 401, 429, 500),
      },
    },
  );
}
