// The plan table (service spec §8.1): the one place every allowance, count and rate limit is read from.

export const PLAN_NAMES = ["trial", "starter", "pro", "business", "scale"] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface Plan {
  name: PlanName;
  priceUsdPerMonth: number;
  pagesPerMonth: number;
  searchQueriesPerMonth: number;
  knowledgeBases: number;
  documents: number;
  storageBytes: number;
  requestsPerSecond: number;
}

const MB = 1024 * 1024;
const GB = 1024 * MB;

export const PLANS: Record<PlanName, Plan> = {
  trial: { name: "trial", priceUsdPerMonth: 0, pagesPerMonth: 100, searchQueriesPerMonth: 500, knowledgeBases: 2, documents: 10, storageBytes: 50 * MB, requestsPerSecond: 5 },
  starter: { name: "starter", priceUsdPerMonth: 29, pagesPerMonth: 500, searchQueriesPerMonth: 5000, knowledgeBases: 3, documents: 50, storageBytes: 500 * MB, requestsPerSecond: 10 },
  pro: { name: "pro", priceUsdPerMonth: 79, pagesPerMonth: 2000, searchQueriesPerMonth: 15000, knowledgeBases: 10, documents: 200, storageBytes: 2 * GB, requestsPerSecond: 50 },
  business: { name: "business", priceUsdPerMonth: 229, pagesPerMonth: 6500, searchQueriesPerMonth: 50000, knowledgeBases: 25, documents: 500, storageBytes: 5 * GB, requestsPerSecond: 100 },
  scale: { name: "scale", priceUsdPerMonth: 499, pagesPerMonth: 15000, searchQueriesPerMonth: 120000, knowledgeBases: 100, documents: 2000, storageBytes: 20 * GB, requestsPerSecond: 200 },
};

export const TRIAL_DAYS = 7;

/** The payment provider's product ids (data.product_id in subscription webhooks) and the plans they buy. */
export const PLAN_BY_PRODUCT_ID: Record<string, Exclude<PlanName, "trial">> = {
  prod_starter: "starter",
  prod_pro: "pro",
  prod_business: "business",
  prod_scale: "scale",
};

export function planForProduct(productId: string): PlanName | null {
  return Object.hasOwn(PLAN_BY_PRODUCT_ID, productId) ? PLAN_BY_PRODUCT_ID[productId] : null;
}

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}

export function planOf(name: string): Plan {
  return isPlanName(name) ? PLANS[name] : PLANS.trial;
}
