// Per-account rate limiting at the plan's requests per second: a token bucket per account whose
// capacity and refill rate both equal the per-second rate. A full bucket allows a burst of that many
// requests at once; after that, one request per 1/rate seconds. When the rate changes (a plan change), the
// bucket keeps the requests already spent from it: its capacity moves to the new rate at once. Limits live in
// memory (one process).
import { QuarryError } from "../errors.ts";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Whole requests left in the bucket after this one. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** When refused: seconds until the next request would be allowed. */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  capacity: number;
  updatedAt: number;
}

/** Buckets idle long enough to be full again are forgotten once this many accounts have one. */
const MAX_BUCKETS = 10_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  /** @param nowMs a monotonic millisecond clock (tests may freeze it). */
  constructor(private readonly nowMs: () => number = () => performance.now()) {}

  take(key: string, perSecond: number): RateDecision {
    const now = this.nowMs();
    const bucket = this.buckets.get(key) ?? this.newBucket(key, perSecond, now);
    if (bucket.capacity !== perSecond) {
      bucket.tokens = Math.max(0, bucket.tokens + perSecond - bucket.capacity);
      bucket.capacity = perSecond;
    }
    bucket.tokens = Math.min(perSecond, bucket.tokens + ((now - bucket.updatedAt) * perSecond) / 1000);
    bucket.updatedAt = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return {
      allowed,
      limit: perSecond,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((perSecond - bucket.tokens) / perSecond),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)),
    };
  }

  private newBucket(key: string, perSecond: number, now: number): Bucket {
    if (this.buckets.size >= MAX_BUCKETS) {
      for (const [k, b] of this.buckets) if (now - b.updatedAt > 1000) this.buckets.delete(k);
    }
    const bucket = { tokens: perSecond, capacity: perSecond, updatedAt: now };
    this.buckets.set(key, bucket);
    return bucket;
  }
}

export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": String(decision.resetSeconds),
  };
}

/** Takes a token for the account; sets the RateLimit headers, or throws 429 RATE_LIMIT_EXCEEDED. */
export function enforceRateLimit(limiter: RateLimiter, accountId: string, perSecond: number, headers: Record<string, unknown>): void {
  const decision = limiter.take(accountId, perSecond);
  Object.assign(headers, rateLimitHeaders(decision));
  if (!decision.allowed) {
    throw new QuarryError("RATE_LIMIT_EXCEEDED", "Rate limit exceeded", undefined, {
      ...rateLimitHeaders(decision),
      "retry-after": String(decision.retryAfterSeconds),
    });
  }
}
