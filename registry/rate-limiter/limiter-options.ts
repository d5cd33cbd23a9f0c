// The RateLimiter's options, checked once at construction so a wrong value fails at start-up with its name.
import { checkPolicy } from "./gcra";
import type { BlockLogger as RateLimitLogger } from "./logger";
import type { RateLimitMetrics } from "./metrics";
import type { RateLimitPolicy } from "./types";

/**
 * What a store failure or timeout means for the request:
 * - `"insurance"`: a local in-memory limiter with the same policy decides (rate-limiter-flexible's
 *   "insurance limiter"). It has seen every request this process let through, so while the store is
 *   down one process admits at most `limit` per window for a key, as before, counting its own.
 * - `"allow"`: fail open, the request passes uncounted. Availability over limits.
 * - `"deny"`: fail closed, 503 `RATE_LIMITER_UNAVAILABLE`.
 */
export type OnStoreError = "insurance" | "allow" | "deny";

export type RateLimiterOptions = {
  /** Requests allowed per window for one key; also the largest burst. */
  limit: number;
  /** At most 366 days; `limit` may be up to `windowMs * 1000` (one request per microsecond). */
  windowMs: number;
  /** Names the policy in headers, metrics and logs, and namespaces its keys in the store. @default "default" */
  name?: string | undefined;
  /** How long a decision may wait for the store before it counts as failed: 1 to 2^31-1 ms. @default 200 */
  timeoutMs?: number | undefined;
  /** @default "insurance" */
  onStoreError?: OnStoreError | undefined;
  /**
   * Store calls one key may have waiting at once in this process; a request past it is refused
   * (429) without a store call. A burst of one caller can then never pile up store calls until they
   * time out. The default is exact: `limit` pending decisions can take the whole quota, so one more
   * could only be refused. @default limit
   */
  maxInFlight?: number | undefined;
  /**
   * Remember refused callers in this process until their `Retry-After`: until then they cost no
   * store round trip (`false` sends every request to the store). @default true
   */
  blockCache?: boolean | undefined;
  /**
   * Ban a caller refused more than `after` times within `withinMs`: 403 `RATE_LIMIT_BANNED` for
   * `forMs`. Refusals are counted in the store (one more round trip per refusal that reaches it),
   * the ban is held in each process that sees the caller refused. @default none
   */
  ban?: BanOptions | undefined;
  /** @default consoleLogger (warnings and errors as JSON lines on stderr) */
  logger?: RateLimitLogger | undefined;
  metrics?: RateLimitMetrics | undefined;
};

export type BanOptions = { after: number; withinMs: number; forMs: number };

export type CheckedOptions = {
  policy: RateLimitPolicy;
  timeoutMs: number;
  onStoreError: OnStoreError;
  /** Undefined: the limit of each check. */
  maxInFlight: number | undefined;
  blockCache: boolean;
  ban: { refusals: RateLimitPolicy; forMs: number } | undefined;
};

/** setTimeout's largest delay: a larger one fires at once, so every store call would "time out". */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
const STORE_ERROR_CHOICES: readonly OnStoreError[] = ["insurance", "allow", "deny"];

/** Throws an error naming the option and what it accepts. */
export function checkOptions(options: RateLimiterOptions): CheckedOptions {
  const policy = checkPolicy({ name: options.name ?? "default", limit: options.limit, windowMs: options.windowMs });
  const timeoutMs = options.timeoutMs ?? 200;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new Error(
      `Invalid timeoutMs ${timeoutMs}: an integer from 1 to ${MAX_TIMEOUT_MS} (setTimeout fires at once past it).`,
    );
  }
  const onStoreError = options.onStoreError ?? "insurance";
  if (!STORE_ERROR_CHOICES.includes(onStoreError)) {
    throw new Error(
      `Invalid onStoreError "${String(onStoreError)}": one of ${STORE_ERROR_CHOICES.map((c) => `"${c}"`).join(", ")}.`,
    );
  }
  const maxInFlight = options.maxInFlight;
  if (maxInFlight !== undefined && (!Number.isSafeInteger(maxInFlight) || maxInFlight < 1))
    throw new Error(`Invalid maxInFlight ${maxInFlight}: a positive integer.`);
  return {
    policy,
    timeoutMs,
    onStoreError,
    maxInFlight,
    blockCache: options.blockCache ?? true,
    ban: checkBan(policy.name, options.ban),
  };
}

function checkBan(name: string, ban: BanOptions | undefined): CheckedOptions["ban"] {
  if (ban === undefined) return undefined;
  if (!Number.isSafeInteger(ban.forMs) || ban.forMs < 1 || ban.forMs > MAX_TIMEOUT_MS) {
    throw new Error(`Invalid ban.forMs ${ban.forMs}: an integer from 1 to ${MAX_TIMEOUT_MS}.`);
  }
  try {
    return { refusals: checkPolicy({ name, limit: ban.after, windowMs: ban.withinMs }), forMs: ban.forMs };
  } catch (err) {
    throw new Error(`Invalid ban (after ${ban.after} refusals within ${ban.withinMs} ms): ${(err as Error).message}`);
  }
}
