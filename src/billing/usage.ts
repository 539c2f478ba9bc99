// Metered usage per account and billing period. Checks and increments happen in the same write
// transaction as the work they count, so concurrent requests never lose or double a count.
import type { Db } from "../store/db.ts";
import { writeTxWhenFree } from "../store/db.ts";
import type { AccountRow } from "../store/accounts.ts";
import { usageLimitExceeded } from "../errors.ts";
import { currentPeriod, type Period } from "./period.ts";
import { accountPlan } from "./limits.ts";
import { TRIAL_DAYS } from "./plans.ts";
import { METADATA_BYTES_SQL } from "../store/metadata-limits.ts";

export interface UsageCounts {
  pages_processed: number;
  search_queries: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function periodOf(account: AccountRow, now: Date): Period {
  return currentPeriod(account.period_anchor, now);
}

export function usageFor(db: Db, account: AccountRow, now: Date): UsageCounts & { period: Period } {
  const period = periodOf(account, now);
  const row = db
    .query<UsageCounts, [string, string]>(
      "SELECT pages_processed, search_queries FROM usage_counters WHERE account_id = ? AND period_start = ?",
    )
    .get(account.id, period.start.toISOString());
  return { pages_processed: row?.pages_processed ?? 0, search_queries: row?.search_queries ?? 0, period };
}

function increment(db: Db, account: AccountRow, now: Date, column: keyof UsageCounts, amount: number): void {
  const periodStart = periodOf(account, now).start.toISOString();
  db.query(
    `INSERT INTO usage_counters (account_id, period_start, ${column}) VALUES (?, ?, ?)
     ON CONFLICT(account_id, period_start) DO UPDATE SET ${column} = ${column} + excluded.${column}`,
  ).run(account.id, periodStart, amount);
}

/**
 * Trial-plan accounts past the end of their trial (7 days after signup, or at once when a subscription
 * ends) may read but not ingest or search: 429 with details {resource:"trial", limit:7, used:<days since signup>}.
 */
export function assertTrialActive(account: AccountRow, now: Date, limitsEnabled: boolean): void {
  if (!limitsEnabled || account.plan !== "trial") return;
  if (now.getTime() < new Date(account.trial_ends_at).getTime()) return;
  const used = Math.floor((now.getTime() - new Date(account.created_at).getTime()) / DAY_MS);
  const why = account.subscription_id ? "Your subscription has ended" : `Your ${TRIAL_DAYS}-day trial has ended`;
  throw usageLimitExceeded(
    `${why}. Upgrade to a paid plan to keep uploading and searching; your data stays readable.`,
    { resource: "trial", limit: TRIAL_DAYS, used },
  );
}

/** Counts one search query, or throws 429 when the monthly allowance is used up. */
export function chargeSearchQuery(db: Db, account: AccountRow, now: Date, limitsEnabled: boolean): Promise<void> {
  return writeTxWhenFree(db, () => {
    assertTrialActive(account, now, limitsEnabled);
    const plan = accountPlan(account);
    const used = usageFor(db, account, now).search_queries;
    if (limitsEnabled && used + 1 > plan.searchQueriesPerMonth) {
      throw usageLimitExceeded(
        `Monthly search query allowance used up (${used} of ${plan.searchQueriesPerMonth} on the ${plan.name} plan). Upgrade your plan or wait for the next billing period.`,
        { limit: plan.searchQueriesPerMonth, current_usage: used, plan: plan.name, requested: 1 },
      );
    }
    increment(db, account, now, "search_queries", 1);
  });
}

function pagesExceeded(plan: { name: string; pagesPerMonth: number }, used: number) {
  return usageLimitExceeded(
    `Monthly page allowance used up (${used} of ${plan.pagesPerMonth} pages on the ${plan.name} plan). Upgrade your plan or wait for the next billing period.`,
    { resource: "pages", limit: plan.pagesPerMonth, used },
  );
}

/** At upload: refuse when the page allowance is already used up. */
export function assertPagesAvailable(db: Db, account: AccountRow, now: Date, limitsEnabled: boolean): void {
  if (!limitsEnabled) return;
  const plan = accountPlan(account);
  const used = usageFor(db, account, now).pages_processed;
  if (used >= plan.pagesPerMonth) throw pagesExceeded(plan, used);
}

/** Throws (pages) when `pages` more would overrun the monthly allowance. */
export function assertPagesFit(db: Db, account: AccountRow, pages: number, now: Date, limitsEnabled: boolean): void {
  if (!limitsEnabled) return;
  const plan = accountPlan(account);
  const used = usageFor(db, account, now).pages_processed;
  if (used + pages > plan.pagesPerMonth) throw pagesExceeded(plan, used);
}

/**
 * When a document finishes processing: count its pages, or throw (counting nothing) if they would overrun
 * the allowance. Call inside the transaction that makes the document ready.
 */
export function consumePages(db: Db, account: AccountRow, pages: number, now: Date, limitsEnabled: boolean): void {
  assertPagesFit(db, account, pages, now, limitsEnabled);
  increment(db, account, now, "pages_processed", pages);
}

/**
 * The account's documents and the storage they take: their files plus the metadata of its documents and
 * knowledge bases (as stored JSON, bounded per record by METADATA_LIMITS). A knowledge base or document
 * being deleted counts for nothing: neither is found or listed any more.
 */
function storedTotals(db: Db, accountId: string): { documents: number; bytes: number } {
  return db
    .query<{ documents: number; bytes: number }, [string, string]>(
      `SELECT COUNT(*) AS documents,
              COALESCE(SUM(COALESCE(file_size_bytes, 0) + ${METADATA_BYTES_SQL}), 0)
                + (SELECT COALESCE(SUM(${METADATA_BYTES_SQL}), 0) FROM knowledge_bases WHERE account_id = ? AND deleting = 0) AS bytes
       FROM documents WHERE account_id = ? AND deleting = 0 AND kb_id NOT IN (SELECT id FROM knowledge_bases WHERE deleting = 1)`,
    )
    .get(accountId, accountId)!;
}

/** Before accepting a new file: the plan's document count and storage caps (429 documents / storage). */
export function assertDocumentCapacity(db: Db, account: AccountRow, addBytes: number, addDocuments: number, limitsEnabled: boolean): void {
  if (!limitsEnabled) return;
  const plan = accountPlan(account);
  const { documents, bytes } = storedTotals(db, account.id);
  if (documents + addDocuments > plan.documents) {
    throw usageLimitExceeded(
      `Document limit reached: the ${plan.name} plan allows ${plan.documents} documents. Delete documents or upgrade your plan.`,
      { resource: "documents", limit: plan.documents, used: documents },
    );
  }
  if (bytes + addBytes > plan.storageBytes) {
    throw usageLimitExceeded(
      bytes >= plan.storageBytes
        ? `Storage limit reached: the ${plan.name} plan allows ${plan.storageBytes} bytes and ${bytes} are used. Delete documents or upgrade your plan.`
        : `Storage limit: ${addBytes} more bytes would exceed the ${plan.name} plan's ${plan.storageBytes} bytes, of which ${bytes} are used. Delete documents or upgrade your plan.`,
      { resource: "storage", limit: plan.storageBytes, used: bytes },
    );
  }
}
