// /auth: signup, login (our addition), API key regeneration (JWT only). Rate-limited per client IP
// (request-gate.ts), which also slows password guessing and probing for registered emails.
import { Elysia } from "elysia";
import { z } from "zod";
import type { AppContext } from "../context.ts";
import { authenticateRequest, invalidCredential } from "../auth.ts";
import { throwBodyError } from "../body.ts";
import { dataOf, perClientErrorResponses, returnedId, Timestamp } from "../schemas.ts";
import { JWT_SCHEME } from "../openapi.ts";
import { refuseIfNotAllowed, type Rate } from "../rate-limit.ts";
import { QuarryError } from "../../errors.ts";
import { normalizeEmail } from "../../store/accounts.ts";

/**
 * Failed logins per email address, whoever sends them: a burst of 10, then one a minute. Guessing one
 * account's password from many addresses (which the per-IP limit does not slow) gets 1,440 tries a day; its
 * owner, once the guessing stops, waits a minute at most. Only failures count: logging in often is fine.
 */
export const LOGIN_FAILURE_RATE: Rate = { perSecond: 1 / 60, burst: 10 };

/** Regenerating takes the dashboard token: whoever holds only the key (perhaps leaked) cannot replace it. */
const API_KEY_NOT_ACCEPTED = "Regenerating the API key takes the dashboard token from signup or POST /auth/login (Authorization: Bearer <token>), not the API key";

const Account = z.object({
  id: returnedId("acc"),
  // Documented as an email, not checked again on the way out: responses are validated at run time, and zod's
  // own pattern refuses addresses signup takes (an internationalized domain, x@example.xn--p1ai).
  email: z.string().meta({ format: "email" }),
  name: z.string().nullable(),
  plan: z.enum(["trial", "starter", "pro", "business", "scale"]),
  trial_ends_at: Timestamp,
  created_at: Timestamp,
});

/**
 * zod's email pattern with each domain label as DNS has it (1-63 letters, digits or hyphens, no hyphen at
 * either end): zod's own took "a@ex-.com", which JSON Schema's `format: email` and mail servers refuse.
 * The top-level domain is letters, or an internationalized one in its ASCII form (xn--p1ai for .рф).
 */
const EMAIL_PATTERN =
  /^(?:[A-Za-z0-9_'+\-]+\.)*[A-Za-z0-9_'+\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?:[A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9](?:[A-Za-z0-9-]{0,57}[A-Za-z0-9])?)$/;

const SignupBody = z.object({
  email: z.email({ pattern: EMAIL_PATTERN }).max(256),
  password: z.string().min(8).max(128),
  name: z.string().max(256).nullish(),
});

const LoginBody = z.object({ email: z.string().max(256), password: z.string().max(128) });

export function authRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/auth" })
    .post(
      "/signup",
      async ({ body, set }) => {
        set.status = 201;
        return { data: await ctx.accounts.signup(body) };
      },
      {
        body: SignupBody,
        response: { 201: dataOf(z.object({ token: z.string(), api_key: z.string(), account: Account })) },
        detail: {
          operationId: "signup", summary: "Create an account",
          description:
            "Returns a dashboard JWT (valid 24 h) and the API key, which is shown only this once. /auth/* is rate-limited per client IP (429 RATE_LIMIT_EXCEEDED; see Per-client rate limits).",
          tags: ["Accounts"],
          security: [],
          responses: perClientErrorResponses(400, 409, 429, 500),
        },
      },
    )
    .post("/login", async ({ body }) => {
      // Unknown emails are counted too, so that a 429 tells nothing about which emails are registered.
      const email = normalizeEmail(body.email);
      refuseIfNotAllowed(ctx.loginFailures.has(email, LOGIN_FAILURE_RATE));
      try {
        return { data: await ctx.accounts.login(body) };
      } catch (error) {
        if (error instanceof QuarryError && error.code === "AUTHENTICATION_ERROR") ctx.loginFailures.take(email, LOGIN_FAILURE_RATE);
        throw error;
      }
    }, {
      body: LoginBody,
      response: { 200: dataOf(z.object({ token: z.string(), account: Account })) },
      detail: {
        operationId: "login", summary: "Log in to an existing account",
        description:
          "Returns a new dashboard JWT (valid 24 h). Wrong email and wrong password give the same 401, after the same password-hash work. Rate-limited per client IP with the other /auth routes, and failed logins per email address: " +
          `after ${LOGIN_FAILURE_RATE.burst}, one more every ${Math.round(1 / LOGIN_FAILURE_RATE.perSecond)} s (429 RATE_LIMIT_EXCEEDED with Retry-After, whatever the password), whether the email is registered or not.`,
        tags: ["Accounts"],
        security: [],
        responses: perClientErrorResponses(400, 401, 429, 500),
      },
    })
    .post(
      "/api-key/regenerate",
      async ({ request }) => {
        const principal = await authenticateRequest(ctx, request);
        // An API key is not a credential here; the message says which one is, since the key itself is valid.
        if (principal.authType !== "jwt") throw invalidCredential(API_KEY_NOT_ACCEPTED);
        throwBodyError(request); // it takes no body, but a malformed one is reported after the credential
        return { data: ctx.accounts.regenerateApiKey(principal.account) };
      },
      {
        response: { 200: dataOf(z.object({ api_key: z.string(), message: z.string() })) },
        detail: {
          operationId: "regenerateApiKey", summary: "Regenerate the API key",
          description:
            `Requires the dashboard JWT from signup or login (Authorization: Bearer <token>); no body. A missing or invalid token is 401 AUTHENTICATION_ERROR "Invalid or missing API key"; an API key is 401 AUTHENTICATION_ERROR "${API_KEY_NOT_ACCEPTED}". The previous key stops working at once; the new one is shown only once. A body, which it does not read, is still checked like any: malformed JSON or another Content-Type is 400 VALIDATION_ERROR, after the credential.`,
          tags: ["Accounts"],
          security: [{ [JWT_SCHEME]: [] }],
          responses: perClientErrorResponses(400, 401, 429, 500),
        },
      },
    );
}

export { Account as AccountSchema };
