// Account rows. API keys are stored only as SHA-256 hashes; passwords only as argon2id hashes.
import type { Db } from "./db.ts";
import { writeTx } from "./db.ts";
import { newId } from "./ids.ts";
import { QuarryError } from "../errors.ts";
import type { PlanName } from "../billing/plans.ts";

export interface AccountRow {
  id: string;
  email: string;
  email_normalized: string;
  name: string | null;
  password_hash: string;
  api_key_hash: string | null;
  plan: string;
  trial_ends_at: string;
  period_anchor: string;
  subscription_id: string | null;
  customer_id: string | null;
  created_at: string;
  updated_at: string;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export interface NewAccount {
  email: string;
  name: string | null;
  passwordHash: string;
  apiKeyHash: string;
  trialEndsAt: Date;
  now: Date;
}

export function insertAccount(db: Db, input: NewAccount): AccountRow {
  const now = input.now.toISOString();
  const row: AccountRow = {
    id: newId("acc", input.now.getTime()),
    email: input.email.trim(),
    email_normalized: normalizeEmail(input.email),
    name: input.name,
    password_hash: input.passwordHash,
    api_key_hash: input.apiKeyHash,
    plan: "trial",
    trial_ends_at: input.trialEndsAt.toISOString(),
    period_anchor: now,
    subscription_id: null,
    customer_id: null,
    created_at: now,
    updated_at: now,
  };
  return writeTx(db, () => {
    if (findAccountByEmail(db, row.email)) {
      throw new QuarryError("CONFLICT", `An account with email ${row.email} already exists`);
    }
    db.query(
      `INSERT INTO accounts (id, email, email_normalized, name, password_hash, api_key_hash, plan, trial_ends_at,
         period_anchor, subscription_id, customer_id, created_at, updated_at)
       VALUES ($id, $email, $email_normalized, $name, $password_hash, $api_key_hash, $plan, $trial_ends_at,
         $period_anchor, $subscription_id, $customer_id, $created_at, $updated_at)`,
    ).run(row as unknown as Record<string, string | null>);
    return row;
  });
}

export function findAccountById(db: Db, id: string): AccountRow | null {
  return db.query<AccountRow, [string]>("SELECT * FROM accounts WHERE id = ?").get(id);
}

export function findAccountByEmail(db: Db, email: string): AccountRow | null {
  return db.query<AccountRow, [string]>("SELECT * FROM accounts WHERE email_normalized = ?").get(normalizeEmail(email));
}

export function findAccountByApiKeyHash(db: Db, hash: string): AccountRow | null {
  return db.query<AccountRow, [string]>("SELECT * FROM accounts WHERE api_key_hash = ?").get(hash);
}

export function setApiKeyHash(db: Db, accountId: string, hash: string, now: Date): void {
  writeTx(db, () => {
    db.query("UPDATE accounts SET api_key_hash = ?, updated_at = ? WHERE id = ?").run(hash, now.toISOString(), accountId);
  });
}

export function listAccounts(db: Db): AccountRow[] {
  return db.query<AccountRow, []>("SELECT * FROM accounts ORDER BY id").all();
}

/** The public view of an account (service spec §2.1, plus trial and creation times). */
export function accountView(row: AccountRow) {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    plan: row.plan as PlanName,
    trial_ends_at: row.trial_ends_at,
    created_at: row.created_at,
  };
}
