// Signup, login, key regeneration and credential checks.
import type { Db } from "../store/db.ts";
import type { Clock } from "../clock.ts";
import { QuarryError } from "../errors.ts";
import { TRIAL_DAYS } from "../billing/plans.ts";
import {
  type AccountRow,
  accountView,
  findAccountByApiKeyHash,
  findAccountByEmail,
  findAccountById,
  insertAccount,
  setApiKeyHash,
} from "../store/accounts.ts";
import { generateApiKey, hashApiKey, hashPassword, looksLikeApiKey, verifyPassword } from "./credentials.ts";
import type { JwtIssuer } from "./jwt.ts";

export type AuthType = "api_key" | "jwt";

export interface Principal {
  account: AccountRow;
  authType: AuthType;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export const INVALID_API_KEY = "Invalid or missing API key";
const INVALID_LOGIN = "Invalid email or password";

export class AccountService {
  constructor(
    private readonly db: Db,
    private readonly jwt: JwtIssuer,
    private readonly clock: Clock,
  ) {
    void dummyHash(); // made now, so the first login for an unknown email takes no longer than the others
  }

  async signup(input: { email: string; password: string; name?: string | null }) {
    if (findAccountByEmail(this.db, input.email)) {
      throw new QuarryError("CONFLICT", `An account with email ${input.email.trim()} already exists`);
    }
    const now = this.clock.now();
    const apiKey = generateApiKey();
    const account = insertAccount(this.db, {
      email: input.email,
      name: input.name ?? null,
      passwordHash: await hashPassword(input.password),
      apiKeyHash: hashApiKey(apiKey),
      trialEndsAt: new Date(now.getTime() + TRIAL_DAYS * DAY_MS),
      now,
    });
    return { token: await this.jwt.sign(account.id, now), api_key: apiKey, account: accountView(account) };
  }

  async login(input: { email: string; password: string }) {
    const account = findAccountByEmail(this.db, input.email);
    // Verify against a dummy hash when the email is unknown so both failures take the same time.
    const ok = await verifyPassword(input.password, account?.password_hash ?? (await dummyHash()));
    if (!account || !ok) throw new QuarryError("AUTHENTICATION_ERROR", INVALID_LOGIN);
    return { token: await this.jwt.sign(account.id, this.clock.now()), account: accountView(account) };
  }

  regenerateApiKey(account: AccountRow) {
    const apiKey = generateApiKey();
    setApiKeyHash(this.db, account.id, hashApiKey(apiKey), this.clock.now());
    return { api_key: apiKey, message: "API key regenerated. The previous key no longer works; store this one now, it is shown only once." };
  }

  /** Resolves a bearer token (an API key or a JWT) to its account, or null. */
  async authenticate(token: string): Promise<Principal | null> {
    if (looksLikeApiKey(token)) {
      const account = findAccountByApiKeyHash(this.db, hashApiKey(token));
      return account ? { account, authType: "api_key" } : null;
    }
    const accountId = await this.jwt.verify(token, this.clock.now());
    const account = accountId ? findAccountById(this.db, accountId) : null;
    return account ? { account, authType: "jwt" } : null;
  }
}

let dummy: Promise<string> | null = null;
function dummyHash(): Promise<string> {
  dummy ??= hashPassword("quarry-timing-equalizer");
  return dummy;
}
