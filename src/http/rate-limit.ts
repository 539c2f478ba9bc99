// Token-bucket rate limiting: per account at the plan's requests per second (capacity = refill = the rate),
// and per client IP on the unauthenticated /auth and /webhooks routes (see client-limits.ts). A full bucket
// allows a burst of its capacity at once; after that, one request per 1/rate seconds. When an account's rate
// changes (a plan change), the bucket keeps the requests already spent from it: its capacity moves to the
// new rate at once. Limits live in memory (one process).
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

/** A rate: tokens added per second, and the bucket's capacity (the largest burst; default the rate). */
export interface Rate {
  perSecond: number;
  burst?: number;
}

/** Buckets tracked at most; past that the least recently used is forgotten (it starts full next time). */
const DEFAULT_MAX_BUCKETS = 10_000;

export class RateLimiter {
  /** In least-recently-used order: every take moves its bucket to the end. */
  private readonly buckets = new Map<string, Bucket>();

  /** @param nowMs a monotonic millisecond clock (tests may freeze it). */
  constructor(
    private readonly nowMs: () => number = () => performance.now(),
    private readonly maxBuckets = DEFAULT_MAX_BUCKETS,
  ) {}

  take(key: string, { perSecond, burst = perSecond }: Rate): RateDecision {
    const now = this.nowMs();
    const bucket = this.touch(key, burst, now);
    if (bucket.capacity !== burst) {
      bucket.tokens = Math.max(0, bucket.tokens + burst - bucket.capacity);
      bucket.capacity = burst;
    }
    bucket.tokens = refilled(bucket, now, perSecond, burst);
    bucket.updatedAt = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return decide(allowed, bucket.tokens, perSecond, burst);
  }

  /** Whether the key's bucket holds a token now, without taking it (a bucket not tracked is full). */
  has(key: string, { perSecond, burst = perSecond }: Rate): RateDecision {
    const bucket = this.buckets.get(key);
    const tokens = bucket ? refilled(bucket, this.nowMs(), perSecond, burst) : burst;
    return decide(tokens >= 1, tokens, perSecond, burst);
  }

  /** How many buckets are tracked (bounded by maxBuckets). */
  get size(): number {
    return this.buckets.size;
  }

  private touch(key: string, capacity: number, now: number): Bucket {
    const bucket = this.buckets.get(key) ?? { tokens: capacity, capacity, updatedAt: now };
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value!);
    return bucket;
  }
}

/** The bucket's tokens at `now`: what it held plus the refill since, up to its capacity. */
function refilled(bucket: Bucket, now: number, perSecond: number, burst: number): number {
  return Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) * perSecond) / 1000);
}

/** The decision for a bucket left with `tokens`. */
function decide(allowed: boolean, tokens: number, perSecond: number, burst: number): RateDecision {
  return {
    allowed,
    limit: burst,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((burst - tokens) / perSecond),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
  };
}

export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": String(decision.resetSeconds),
  };
}

/** Takes a token from the key's bucket; sets the RateLimit headers, or throws 429 RATE_LIMIT_EXCEEDED. */
export function enforceRateLimit(limiter: RateLimiter, key: string, rate: Rate, headers: Record<string, unknown>): void {
  const decision = limiter.take(key, rate);
  Object.assign(headers, rateLimitHeaders(decision));
  refuseIfNotAllowed(decision);
}

/** Throws 429 RATE_LIMIT_EXCEEDED, with the RateLimit headers and Retry-After, when the decision refuses. */
export function refuseIfNotAllowed(decision: RateDecision): void {
  if (!decision.allowed) {
    throw new QuarryError("RATE_LIMIT_EXCEEDED", "Rate limit exceeded", undefined, {
      ...rateLimitHeaders(decision),
      "retry-after": String(decision.retryAfterSeconds),
    });
  }
}
