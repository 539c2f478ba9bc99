// `quarry accounts list` and `quarry accounts set-plan <account id or email> <plan>`: a self-hoster's
// way to see accounts and move one between plans without a payment provider. Works on the database in
// the data dir directly; a running server sees the change on the account's next request.
import { join } from "node:path";
import { commandArguments, type Config } from "../config.ts";
import { openDatabase, writeTx, type Db } from "../store/db.ts";
import { databasePathIn } from "../store/database-file.ts";
import { findAccountByEmail, findAccountById, listAccounts, type AccountRow } from "../store/accounts.ts";
import { updateAccountPlan } from "../store/account-plans.ts";
import { isPlanName, PLAN_NAMES } from "../billing/plans.ts";
import { accountPlan } from "../billing/limits.ts";
import { usageFor } from "../billing/usage.ts";
import { CliError } from "./cli-error.ts";
import { assertDatabaseExists } from "./existing-database.ts";

export const ACCOUNTS_USAGE = `Usage:
  quarry accounts list [--data-dir DIR]
  quarry accounts set-plan <account id or email> <plan> [--data-dir DIR]

Plans: ${PLAN_NAMES.join(", ")}. set-plan takes effect at once, also on a running server; the billing
period and the usage counted in it are kept. Setting "trial" gives the trial allowances until the
account's trial end (7 days after signup).`;

function trialStatus(account: AccountRow, now: Date): string {
  if (account.plan !== "trial") return account.subscription_id ? `subscription ${account.subscription_id}` : "set by operator";
  const ends = new Date(account.trial_ends_at);
  return ends > now ? `trial until ${account.trial_ends_at}` : "trial over";
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c])).join("  ").trimEnd()).join("\n");
}

function listCommand(db: Db, now: Date): string {
  const accounts = listAccounts(db);
  if (accounts.length === 0) return "No accounts yet.";
  const rows = accounts.map((a) => {
    const plan = accountPlan(a);
    const usage = usageFor(db, a, now);
    return [
      a.id,
      a.email,
      a.plan,
      trialStatus(a, now),
      `${usage.pages_processed}/${plan.pagesPerMonth}`,
      `${usage.search_queries}/${plan.searchQueriesPerMonth}`,
      a.created_at,
    ];
  });
  return table([["ID", "EMAIL", "PLAN", "STATUS", "PAGES", "QUERIES", "CREATED"], ...rows]);
}

function setPlanCommand(db: Db, who: string | undefined, planName: string | undefined, now: Date): string {
  if (!who || !planName) throw new CliError(`set-plan needs an account id or email and a plan.\n\n${ACCOUNTS_USAGE}`);
  if (!isPlanName(planName)) throw new CliError(`Unknown plan "${planName}". Plans: ${PLAN_NAMES.join(", ")}.`);
  return writeTx(db, () => {
    const account = findAccountById(db, who) ?? findAccountByEmail(db, who);
    if (!account) throw new CliError(`No account with id or email "${who}". See: quarry accounts list`);
    updateAccountPlan(
      db,
      account.id,
      {
        plan: planName,
        trialEndsAt: account.trial_ends_at,
        periodAnchor: account.period_anchor,
        subscriptionId: account.subscription_id,
        customerId: account.customer_id,
      },
      now,
    );
    return `${account.id} (${account.email}): ${account.plan} → ${planName}`;
  });
}

/** Runs `quarry accounts …`; returns the text to print, or throws CliError for a usage mistake. */
export function accountsCommand(config: Config, argv: string[], now: Date = new Date()): string {
  const [subcommand, ...args] = commandArguments(argv);
  if (subcommand !== "list" && subcommand !== "set-plan") {
    throw new CliError(subcommand ? `Unknown accounts command "${subcommand}".\n\n${ACCOUNTS_USAGE}` : ACCOUNTS_USAGE);
  }
  const stray = args[subcommand === "list" ? 0 : 2];
  if (stray !== undefined) throw new CliError(`Unexpected argument "${stray}".\n\n${ACCOUNTS_USAGE}`);
  assertDatabaseExists(config.dataDir);
  const db = openDatabase(databasePathIn(config.dataDir));
  try {
    return subcommand === "list" ? listCommand(db, now) : setPlanCommand(db, args[0], args[1], now);
  } finally {
    db.close(); // no forced checkpoint: a running server may share the file
  }
}
