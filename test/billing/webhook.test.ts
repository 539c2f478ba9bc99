// The payment webhook through the real HTTP API: Standard Webhooks signatures, idempotent redelivery,
// and how subscription events move an account between plans.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock, signup, startTestServer, type TestAccount, type TestServer } from "../helpers/server.ts";
import { deliverWebhook, newWebhookSecret, subscriptionEvent, type Delivery } from "./webhook-client.ts";
import { webhookEventBackfill } from "../../src/store/migrations/034_webhook_event_backfill.ts";
import { applyMigration } from "../../src/store/migrate.ts";

const secret = newWebhookSecret();
const clock = new ManualClock(new Date());
let server: TestServer;
beforeAll(async () => {
  // The limiter's clock moves a second per request, so these tests never hit the per-second rate.
  let rateClockMs = 0;
  server = await startTestServer({ clock, env: { QUARRY_WEBHOOK_SECRET: secret }, rateLimitClock: () => (rateClockMs += 1000) });
});
afterAll(() => server.stop());

const deliver = (payload: unknown, options?: Delivery) => deliverWebhook(server, secret, payload, options);
const subscription = (event: string, account: TestAccount, data?: Record<string, unknown>) => subscriptionEvent(event, account.id, data);

async function accountOf(account: TestAccount) {
  const res = await server.request("GET", "/v1/account", { token: account.apiKey });
  expect(res.status).toBe(200);
  return { ...res.body.data, rateLimit: res.headers.get("ratelimit-limit") };
}

function outcomeOf(webhookId: string): string | undefined {
  return (server.server.ctx.db.query("SELECT outcome FROM webhook_events WHERE id = ?").get(webhookId) as { outcome: string } | null)?.outcome;
}

const INVALID = { error: { code: "AUTHENTICATION_ERROR", message: "Invalid webhook signature" } };

describe("signature verification", () => {
  test("a correctly signed delivery is accepted: {received: true}", async () => {
    const account = await signup(server);
    const res = await deliver(subscription("subscription.active", account));
    expect(res).toMatchObject({ status: 200, body: { received: true } });
    expect((await accountOf(account)).plan).toBe("pro");
  });

  test("wrong secret, tampered body, stale or future timestamp, missing or unknown-version signature: 401, nothing applied", async () => {
    const account = await signup(server);
    const payload = subscription("subscription.active", account);
    const otherSecret = newWebhookSecret();
    const now = Math.floor(Date.now() / 1000);
    const cases: Delivery[] = [
      { signWith: otherSecret },
      { sentBody: JSON.stringify({ ...payload, data: { ...payload.data, product_id: "prod_scale" } }) },
      { timestamp: now - 6 * 60 },
      { timestamp: now + 6 * 60 },
      { signature: () => "" },
      { signature: (valid) => valid.replace("v1,", "v2,") },
      { signature: () => `v1,${Buffer.from("x".repeat(32)).toString("base64")}` },
    ];
    for (const options of cases) {
      const res = await deliver(payload, options);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID);
    }
    const missing = await fetch(`${server.url}/webhooks/payments`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(payload) });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual(INVALID);
    expect((await accountOf(account)).plan).toBe("trial");
  });

  test("a timestamp within 5 minutes is accepted", async () => {
    const account = await signup(server);
    const res = await deliver(subscription("subscription.active", account), { timestamp: Math.floor(Date.now() / 1000) - 4 * 60 });
    expect(res.status).toBe(200);
  });

  test("several space-separated signatures: any valid v1 one is enough", async () => {
    const account = await signup(server);
    const bogus = `v1,${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;
    const res = await deliver(subscription("subscription.active", account), { signature: (valid) => `v1a,xyz ${bogus} ${valid}` });
    expect(res.status).toBe(200);
    expect((await accountOf(account)).plan).toBe("pro");
    const allBogus = await deliver(subscription("subscription.updated", account, { product_id: "prod_scale" }), { signature: () => `${bogus} ${bogus}` });
    expect(allBogus.status).toBe(401);
  });

  test("a redelivered webhook-id is acknowledged but not applied twice", async () => {
    const account = await signup(server);
    const first = await deliver(subscription("subscription.active", account));
    await deliver(subscription("subscription.updated", account, { product_id: "prod_business" }));
    expect((await accountOf(account)).plan).toBe("business");
    const again = await deliver(subscription("subscription.active", account), { id: first.id });
    expect(again).toMatchObject({ status: 200, body: { received: true } });
    expect((await accountOf(account)).plan).toBe("business");
    const rows = server.server.ctx.db.query("SELECT COUNT(*) AS n FROM webhook_events WHERE id = ?").get(first.id) as { n: number };
    expect(rows.n).toBe(1);
  });

  test("the exact raw bytes are verified (whitespace and key order as sent)", async () => {
    const account = await signup(server);
    const raw = `{ "data": {"product_id":"prod_starter", "metadata": {"account_id": "${account.id}"}},\n  "event": "subscription.active" }`;
    expect((await deliver(raw)).status).toBe(200);
    expect((await accountOf(account)).plan).toBe("starter");
    // a byte-order mark is part of what was signed (a text decoder would drop it), then ignored by the JSON parse
    const withBom = `\uFEFF${raw.replace("prod_starter", "prod_pro")}`;
    expect((await deliver(withBom)).status).toBe(200);
    expect((await accountOf(account)).plan).toBe("pro");
  });

  test("a correctly signed body that is not an event is 400 VALIDATION_ERROR", async () => {
    for (const body of ["not json", "[1,2]", JSON.stringify({ data: {} })]) {
      const res = await deliver(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
    }
  });

  test("the event's timestamp is an ISO 8601 date-time (spec 6.1) or Unix time when present: anything else is 400 at its path", async () => {
    const account = await signup(server);
    const malformed = ["abc", "2026-11-26", "2026-13-01T12:00:00Z", "2026-11-26T25:00:00Z", "2026-11-26T12:00:61Z", "2026-11-26T12:00:00+99:99", "2026-11-26T12:00:00 UTC", -5, 3e14, "-5", "12:00", "9999-12-31T23:59:59-01:00", true, [1]];
    for (const timestamp of malformed) {
      const res = await deliver(JSON.stringify({ ...subscription("subscription.active", account), timestamp }));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
      expect(res.body.error.details.issues).toEqual([{ path: ["timestamp"], message: expect.stringMatching(/^must be an ISO 8601 date-time/) }]);
    }
    expect((await accountOf(account)).plan).toBe("trial");
    const written = ["2026-11-26T12:00:00.123456Z", "2026-11-26T12:00:00+01:00", "2026-11-26T12:00:00.000+0000", "2026-11-26 12:00:00", "2026-11-26T12:00Z", "1969-12-31T23:59:59Z", null];
    for (const timestamp of written) {
      expect((await deliver(JSON.stringify({ ...subscription("subscription.active", account), timestamp }))).status).toBe(200);
    }
    expect((await accountOf(account)).plan).toBe("pro");

    // Unix time, in seconds or milliseconds, orders a subscription's events like the ISO form.
    const unix = await signup(server);
    const at = (iso: string) => Date.parse(iso) / 1000;
    const event = (product: string, timestamp: number) => ({ ...subscription("subscription.active", unix, { product_id: product }), timestamp });
    expect((await deliver(event("prod_pro", at("2026-11-26T12:00:00Z")))).status).toBe(200);
    const older = await deliver(event("prod_scale", at("2026-11-26T11:00:00Z") * 1000));
    expect([older.status, (await accountOf(unix)).plan]).toEqual([200, "pro"]);
    expect((await deliver(event("prod_starter", at("2026-11-26T13:00:00Z") * 1000))).status).toBe(200);
    expect((await accountOf(unix)).plan).toBe("starter");
    // and as a string of digits, as the webhook-timestamp header has it
    expect((await deliver({ ...event("prod_business", 0), timestamp: String(at("2026-11-26T14:00:00Z")) })).status).toBe(200);
    expect((await accountOf(unix)).plan).toBe("business");
  });

  test("without QUARRY_WEBHOOK_SECRET every delivery is refused", async () => {
    const unconfigured = await startTestServer();
    try {
      const res = await fetch(`${unconfigured.url}/webhooks/payments`, {
        method: "POST",
        headers: { "content-type": "application/json", "webhook-id": "msg_1", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": "v1,abc" },
        body: "{}",
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(INVALID);
    } finally {
      await unconfigured.stop();
    }
  });
});

describe("subscription events", () => {
  test("created, active and updated set the plan from product_id; limits and rate change at once", async () => {
    const account = await signup(server);
    expect((await accountOf(account)).rateLimit).toBe("5");
    for (const [event, product, plan, rate] of [
      ["subscription.created", "prod_starter", "starter", "10"],
      ["subscription.active", "prod_pro", "pro", "50"],
      ["subscription.updated", "prod_business", "business", "100"],
      ["subscription.updated", "prod_scale", "scale", "200"],
    ]) {
      const res = await deliver(subscription(event, account, { product_id: product }));
      expect(res.status).toBe(200);
      const now = await accountOf(account);
      expect(now.plan).toBe(plan);
      expect(now.rateLimit).toBe(rate);
    }
    const usage = await server.request("GET", "/v1/usage", { token: account.apiKey });
    expect(usage.body.data).toMatchObject({ plan: "scale", limits: { pages_processed: 15000, search_queries: 120000 } });
  });

  test("a new subscription starts a new billing period; a product change keeps it", async () => {
    const account = await signup(server);
    const signupPeriod = (await server.request("GET", "/v1/usage", { token: account.apiKey })).body.data.current_period_start;
    clock.advance(3 * 24 * 3600_000);
    const startedAt = clock.now().toISOString();
    await deliver(subscription("subscription.active", account));
    const period = (await server.request("GET", "/v1/usage", { token: account.apiKey })).body.data;
    expect(period.current_period_start).not.toBe(signupPeriod);
    expect(period.current_period_start).toBe(startedAt);
    clock.advance(24 * 3600_000);
    await deliver(subscription("subscription.updated", account, { product_id: "prod_scale" }));
    expect((await server.request("GET", "/v1/usage", { token: account.apiKey })).body.data.current_period_start).toBe(startedAt);
  });

  test("canceled and revoked return the account to the trial allowances with the trial over", async () => {
    for (const event of ["subscription.canceled", "subscription.revoked"]) {
      const account = await signup(server);
      await deliver(subscription("subscription.active", account));
      const res = await deliver(subscription(event, account));
      expect(res.status).toBe(200);
      expect(outcomeOf(res.id)).toBe("subscription_ended");
      const after = await accountOf(account);
      expect(after.plan).toBe("trial");
      expect(after.rateLimit).toBe("5");
      expect(new Date(after.trial_ends_at).getTime()).toBeLessThanOrEqual(clock.now().getTime());
      // reads keep working
      expect((await server.request("GET", "/v1/knowledge-bases", { token: account.apiKey })).status).toBe(200);
    }
  });

  test("an end event for an account still in its trial ends the trial: ingestion and search refused, reads work", async () => {
    const account = await signup(server);
    const kbId = (await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "kb" } })).body.data.id;
    const res = await deliver(subscription("subscription.canceled", account));
    expect(outcomeOf(res.id)).toBe("subscription_ended");
    const after = await accountOf(account);
    expect(after.plan).toBe("trial");
    expect(new Date(after.trial_ends_at).getTime()).toBeLessThanOrEqual(clock.now().getTime());
    const text = await server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, { token: account.apiKey, body: { text: "late" } });
    const search = await server.request("POST", `/v1/knowledge-bases/${kbId}/search`, { token: account.apiKey, body: { query: "late" } });
    for (const refused of [text, search]) {
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: "USAGE_LIMIT_EXCEEDED", details: { resource: "trial", limit: 7, used: 0 } });
    }
    expect((await server.request("GET", `/v1/knowledge-bases/${kbId}`, { token: account.apiKey })).status).toBe(200);
    expect(outcomeOf((await deliver(subscription("subscription.revoked", account))).id)).toBe("already_on_trial");
  });

  test("an end event without a subscription id ends the current one; a plan event for that same subscription reopens it, with a new period", async () => {
    const account = await signup(server);
    const untimed = (name: string, data: Record<string, unknown>) => ({ ...subscription(name, account, data), timestamp: undefined });
    await deliver(untimed("subscription.created", { subscription_id: "sub_Q" }));
    const { current_period_start: periodStart } = (await server.request("GET", "/v1/usage", { token: account.apiKey })).body.data;
    expect(outcomeOf((await deliver(untimed("subscription.canceled", { subscription_id: undefined }))).id)).toBe("subscription_ended");
    expect((await accountOf(account)).plan).toBe("trial");
    clock.advance(60_000);
    expect(outcomeOf((await deliver(untimed("subscription.active", { subscription_id: "sub_Q", product_id: "prod_starter" }))).id)).toBe("subscription_started");
    expect((await accountOf(account)).plan).toBe("starter");
    const usage = (await server.request("GET", "/v1/usage", { token: account.apiKey })).body.data;
    expect(new Date(usage.current_period_start).getTime()).toBe(new Date(periodStart).getTime() + 60_000);
    const kbId = (await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "reopened" } })).body.data.id;
    expect((await server.request("POST", `/v1/knowledge-bases/${kbId}/search`, { token: account.apiKey, body: { query: "x", mode: "keyword" } })).status).toBe(200);
  });

  test("an end event for another subscription than the account's current one changes nothing", async () => {
    const account = await signup(server);
    await deliver(subscription("subscription.active", account, { subscription_id: "sub_new" }));
    const res = await deliver(subscription("subscription.canceled", account, { subscription_id: "sub_old" }));
    expect(res.status).toBe(200);
    expect(outcomeOf(res.id)).toBe("stale_subscription");
    expect((await accountOf(account)).plan).toBe("pro");
  });

  test("deliveries out of order: an event older than one applied, or a plan event for an ended subscription, changes nothing", async () => {
    const account = await signup(server);
    const at = (hour: number) => `2026-12-01T${String(hour).padStart(2, "0")}:00:00Z`;
    const event = (name: string, sub: string, hour: number | null, product = "prod_pro") => ({
      ...subscription(name, account, { subscription_id: sub, product_id: product }),
      timestamp: hour === null ? undefined : at(hour),
    });
    const outcomes: string[] = [];
    const send = async (payload: unknown) => outcomes.push(outcomeOf((await deliver(payload)).id)!);
    await send(event("subscription.created", "sub_1", 10));
    await send(event("subscription.canceled", "sub_1", 11));
    await send(event("subscription.created", "sub_2", 12, "prod_starter"));
    const { current_period_start: periodStart } = (await server.request("GET", "/v1/usage", { token: account.apiKey })).body.data;
    // Retried late: the old subscription's update from before its cancellation, then one with no time at all.
    await send(event("subscription.updated", "sub_1", 10, "prod_scale"));
    await send(event("subscription.active", "sub_1", null, "prod_scale"));
    // The current subscription: an older update is ignored, a newer one applies, and so does its end.
    await send(event("subscription.updated", "sub_2", 11, "prod_scale"));
    expect((await accountOf(account)).plan).toBe("starter");
    expect((await server.request("GET", "/v1/usage", { token: account.apiKey })).body.data.current_period_start).toBe(periodStart);
    await send(event("subscription.updated", "sub_2", 13, "prod_business"));
    expect((await accountOf(account)).plan).toBe("business");
    await send(event("subscription.canceled", "sub_2", 14));
    expect(outcomes).toEqual([
      "subscription_started",
      "subscription_ended",
      "subscription_started",
      "out_of_order",
      "ended_subscription",
      "out_of_order",
      "plan_changed",
      "subscription_ended",
    ]);
    expect((await accountOf(account)).plan).toBe("trial");
  });

  test("switching subscriptions: the new one applies whether or not the old one's later cancellation arrives first", async () => {
    const at = (time: string) => `2026-12-07T${time}Z`;
    for (const cancelFirst of [false, true]) {
      const account = await signup(server);
      const event = (name: string, sub: string, time: string, product = "prod_starter") => ({
        ...subscription(name, account, { subscription_id: sub, product_id: product }),
        timestamp: at(time),
      });
      await deliver(event("subscription.active", "sub_old", "10:00:00"));
      const activation = event("subscription.active", "sub_new", "12:00:00", "prod_pro");
      const cancellation = event("subscription.canceled", "sub_old", "12:00:05");
      const outcomes: Record<string, string | undefined> = {};
      const order = [["activate", activation], ["cancel", cancellation]] as const;
      for (const [name, payload] of cancelFirst ? [...order].reverse() : order) outcomes[name] = outcomeOf((await deliver(payload)).id);
      expect(outcomes).toEqual({ activate: "subscription_started", cancel: cancelFirst ? "subscription_ended" : "stale_subscription" });
      expect((await accountOf(account)).plan).toBe("pro");
      // A retry of the old subscription from before the switch changes nothing.
      expect(outcomeOf((await deliver(event("subscription.updated", "sub_old", "11:00:00", "prod_scale"))).id)).toBe("out_of_order");
      expect((await accountOf(account)).plan).toBe("pro");
      // Nor, once the new one has ended too, does a third subscription's event from before the new one began.
      await deliver(event("subscription.canceled", "sub_new", "13:00:00"));
      expect(outcomeOf((await deliver(event("subscription.active", "sub_third", "11:30:00", "prod_scale"))).id)).toBe("out_of_order");
      expect((await accountOf(account)).plan).toBe("trial");
    }
  });

  test("an old subscription's end that came after the switch still ends it: its later-arriving older retries change nothing", async () => {
    const account = await signup(server);
    const event = (name: string, sub: string, second: number, product = "prod_starter") => ({
      ...subscription(name, account, { subscription_id: sub, product_id: product }),
      timestamp: `2026-12-01T12:00:${String(second).padStart(2, "0")}Z`,
    });
    const outcomes: string[] = [];
    const send = async (payload: unknown) => outcomes.push(outcomeOf((await deliver(payload)).id)!);
    await send(event("subscription.active", "sub_A", 0));
    await send(event("subscription.active", "sub_B", 3, "prod_pro"));
    await send(event("subscription.canceled", "sub_A", 5)); // the account is on sub_B: nothing changes, but sub_A is over
    await send(event("subscription.updated", "sub_A", 4, "prod_business")); // older than sub_A's end
    expect((await accountOf(account)).plan).toBe("pro");
    await send(event("subscription.canceled", "sub_B", 9));
    await send(event("subscription.updated", "sub_A", 1, "prod_business")); // a retry from before either end
    expect(outcomes).toEqual(["subscription_started", "subscription_started", "stale_subscription", "out_of_order", "subscription_ended", "out_of_order"]);
    expect((await accountOf(account)).plan).toBe("trial");
    // Reactivated after its end (the provider's "uncancel"): dated later, it applies.
    await send(event("subscription.active", "sub_A", 30, "prod_business"));
    expect(outcomes.at(-1)).toBe("subscription_started");
    expect((await accountOf(account)).plan).toBe("business");
  });

  test("with two subscriptions, the old one's update, cancellation or post-end update never takes the account off the new one, in any arrival order", async () => {
    const permutations = <T,>(items: T[]): T[][] =>
      items.length <= 1 ? [items] : items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
    const at = (seconds: number) => new Date(Date.UTC(2026, 11, 7, 10, 0, 0) + seconds * 1000).toISOString();
    type Spec = [event: string, sub: string, seconds: number, data?: Record<string, unknown>];
    const scenarios: Spec[][] = [
      // Its cancellation scheduled (an update), then done, in the same second.
      [["subscription.created", "sub_A", 1], ["subscription.created", "sub_B", 3, { product_id: "prod_scale" }], ["subscription.updated", "sub_A", 4], ["subscription.canceled", "sub_A", 4]],
      // Ended, then revoked, then an update saying so.
      [["subscription.created", "sub_A", 1], ["subscription.created", "sub_B", 3, { product_id: "prod_scale" }], ["subscription.canceled", "sub_A", 4], ["subscription.revoked", "sub_A", 9], ["subscription.updated", "sub_A", 9.2, { status: "canceled" }]],
    ];
    for (const scenario of scenarios) {
      const finals = new Set<string>();
      for (const order of permutations(scenario)) {
        const account = await signup(server);
        for (const [name, sub, seconds, data] of order) await deliver({ ...subscription(name, account, { subscription_id: sub, ...data }), timestamp: at(seconds) });
        const row = server.server.ctx.db.query("SELECT plan, subscription_id FROM accounts WHERE id = ?").get(account.id) as { plan: string; subscription_id: string };
        finals.add(`${row.plan} on ${row.subscription_id}`);
      }
      expect([...finals]).toEqual(["scale on sub_B"]);
    }
  });

  test("a cancelled subscription is not revived by an update of the same second; an update saying it is canceled ends it, in any order", async () => {
    const account = await signup(server);
    const event = (name: string, timestamp: string, data: Record<string, unknown> = {}) => ({ ...subscription(name, account, { subscription_id: "sub_S", ...data }), timestamp });
    await deliver(event("subscription.created", "2026-12-07T10:00:01Z"));
    await deliver(event("subscription.canceled", "2026-12-07T10:00:04Z"));
    expect(outcomeOf((await deliver(event("subscription.updated", "2026-12-07T10:00:04Z"))).id)).toBe("ended_subscription");
    expect((await accountOf(account)).plan).toBe("trial");
    // Polar-like: canceled, revoked, then an update a moment later saying status canceled; every arrival order ends on the trial.
    const at = (seconds: number) => new Date(Date.UTC(2026, 11, 7, 10, 0, 0) + seconds * 1000).toISOString();
    const events: [string, number, Record<string, unknown>][] = [
      ["subscription.created", 1, {}],
      ["subscription.canceled", 5, {}],
      ["subscription.revoked", 9, {}],
      ["subscription.updated", 9.2, { status: "canceled" }],
    ];
    const permutations = <T,>(items: T[]): T[][] =>
      items.length <= 1 ? [items] : items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
    const plans = new Set<string>();
    for (const order of permutations(events)) {
      const each = await signup(server);
      for (const [name, seconds, data] of order) await deliver({ ...subscription(name, each, { subscription_id: "sub_S", ...data }), timestamp: at(seconds) });
      plans.add((await accountOf(each)).plan);
    }
    expect([...plans]).toEqual(["trial"]);
  });

  test("events recorded before their subscription and time had columns (an upgraded data dir) still order late deliveries", async () => {
    const db = server.server.ctx.db;
    const asBeforeMigration33 = (ids: string[]) => {
      for (const id of ids) db.query("UPDATE webhook_events SET subscription_id = NULL, event_at = NULL WHERE id = ?").run(id);
      applyMigration(db, webhookEventBackfill);
    };
    const cases = [
      { sub: "sub_old_version", startAt: "2026-12-07T10:00:00+01:00", endAt: "2026-12-07T12:00:00+01:00", endSub: "sub_old_version" },
      // The forms the route takes besides: an offset without its colon, lowercase t and z; an end without a subscription id.
      { sub: "sub_lenient", startAt: "2026-12-07t09:00:00z", endAt: "2026-12-07 12:00:00+0100", endSub: undefined },
    ];
    for (const { sub, startAt, endAt, endSub } of cases) {
      const account = await signup(server);
      const event = (name: string, timestamp: string, data: Record<string, unknown>) => ({ ...subscription(name, account, data), timestamp });
      const recorded = [
        (await deliver(event("subscription.active", startAt, { subscription_id: sub }))).id,
        (await deliver(event("subscription.canceled", endAt, { subscription_id: endSub }))).id,
      ];
      asBeforeMigration33(recorded);
      expect(db.query("SELECT subscription_id, event_at FROM webhook_events WHERE id = ?").get(recorded[1])).toEqual({ subscription_id: sub, event_at: "2026-12-07T11:00:00.000Z" });
      // A retry from between the two arrives after the upgrade: the cancellation stands.
      expect(outcomeOf((await deliver(event("subscription.updated", "2026-12-07T10:30:00Z", { subscription_id: sub, product_id: "prod_scale" }))).id)).toBe("out_of_order");
      expect((await accountOf(account)).plan).toBe("trial");
    }
  });

  test("the account is found by metadata.account_id, else customer_email, else a customer_id seen before", async () => {
    const account = await signup(server);
    const byEmail = await deliver({
      event: "subscription.active",
      data: { subscription_id: "sub_e", customer_id: "cus_email_test", customer_email: account.email.toUpperCase(), product_id: "prod_starter" },
    });
    expect(outcomeOf(byEmail.id)).toBe("subscription_started");
    expect((await accountOf(account)).plan).toBe("starter");
    await deliver({ event: "subscription.updated", data: { subscription_id: "sub_e", customer_id: "cus_email_test", product_id: "prod_pro" } });
    expect((await accountOf(account)).plan).toBe("pro");
    const stored = server.server.ctx.db.query("SELECT subscription_id, customer_id FROM accounts WHERE id = ?").get(account.id);
    expect(stored).toEqual({ subscription_id: "sub_e", customer_id: "cus_email_test" });
  });

  test("unknown events, unknown products and unknown customers are acknowledged and recorded, with no change", async () => {
    const account = await signup(server);
    const cases: [unknown, string][] = [
      [subscription("subscription.paused", account), "unknown_event"],
      [{ event: "payment.succeeded", data: { metadata: { account_id: account.id } } }, "unknown_event"],
      [subscription("subscription.active", account, { product_id: "prod_enterprise" }), "unknown_product"],
      [{ event: "subscription.active", data: { customer_id: "cus_never_seen", customer_email: "nobody@example.com", product_id: "prod_pro" } }, "no_account"],
    ];
    for (const [payload, outcome] of cases) {
      const res = await deliver(payload);
      expect(res).toMatchObject({ status: 200, body: { received: true } });
      expect(outcomeOf(res.id)).toBe(outcome);
    }
    expect((await accountOf(account)).plan).toBe("trial");
  });
});
