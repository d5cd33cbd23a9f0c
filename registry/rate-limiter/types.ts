// The limiter's data: a policy, what a store answers, and the decision the limiter derives from it.

/** "At most `limit` requests per `windowMs` for one key", named for the `RateLimit-Policy` header. */
export type RateLimitPolicy = {
  /** Names the policy in the headers and metrics: letters, digits, `_`, `-`, `.`. */
  name: string;
  limit: number;
  windowMs: number;
};

/**
 * The policy as GCRA sees it, in microseconds: one request costs `intervalUs` of "debt", and a key
 * may carry at most `capacityUs` of it (`limit` × `intervalUs`), so a burst of `limit` fits and no more.
 */
export type GcraRate = {
  intervalUs: number;
  capacityUs: number;
};

/**
 * What a store answers for one attempt, both instants on the store's own clock (µs since the
 * epoch): `tat` is the key's theoretical arrival time after the attempt.
 */
export type StoreDecision = {
  allowed: boolean;
  tat: number;
  now: number;
};

/**
 * A place to keep one number per key. `take` must be atomic: read the key's TAT, decide, and write
 * the new TAT as one step, so two callers can never both take the last request of a window.
 */
export interface RateLimitStore {
  take(key: string, rate: GcraRate): Promise<StoreDecision>;
}

/** The limiter's answer for one request. */
export type RateLimitDecision = {
  allowed: boolean;
  policy: RateLimitPolicy;
  /** Requests still allowed right now. */
  remaining: number;
  /** Until the key is back to its full `limit`. */
  resetMs: number;
  /**
   * Until one more request is available: within it the caller can use no more than `remaining`
   * (the draft's "effective window", the `t` of the `RateLimit` field).
   */
  nextMs: number;
  /** When refused: until one more request is allowed; 0 otherwise. */
  retryAfterMs: number;
  /** False when the store failed and the request went through uncounted (`onStoreError: "allow"`). */
  counted: boolean;
  /** Refused because the caller is banned (too many refusals, or a deny list): 403, not 429. */
  banned: boolean;
};
