// What every adapter shares: the key of a request, the limiter's decision, and the response it implies.
import { isRateLimitError, rejectedWith, type RateLimitError } from "../errors";
import { rateLimitedError, type CheckOptions, type RateLimiter } from "../limiter";
import type { RateLimitDecision } from "../types";
import { addressList, addressReader } from "./client-address";
import { rateLimitHeaders } from "./headers";
import { addressOfRequest, requestKey } from "./request-key";
import type { FrameworkDefaults, RateLimitRouteOptions } from "./route-options";

export type { FrameworkDefaults, MaybePromise, RateLimitRouteOptions } from "./route-options";

/** `next`: run the route with these headers added; `send`: answer now (429, 403 or 503). */
export type LimitOutcome =
  | { kind: "next"; headers: Record<string, string> }
  | { kind: "send"; status: number; headers: Record<string, string>; body: string };

const NO_HEADERS: Record<string, string> = {};

/**
 * Resolves the options once and returns the per-request step an adapter calls.
 *
 * @example
 * const limit = limitRoute(limiter, options, expressDefaults);
 * const outcome = await limit(req); // then set outcome.headers, and send or call next()
 */
export function limitRoute<Req>(
  limiter: RateLimiter,
  options: RateLimitRouteOptions<Req>,
  defaults: FrameworkDefaults<Req>,
) {
  const addressOf = addressOfRequest(defaults, addressReader(options.trustProxy ?? 0));
  const keyOf = options.getKey ?? requestKey(options, defaults, addressOf);
  const allowed = options.allowList ? addressList(options.allowList, "allowList entry") : undefined;
  const denied = options.denyList ? addressList(options.denyList, "denyList entry") : undefined;
  const sendHeaders = options.headers ?? true;
  const { skip, cost, limit } = options;

  // Made once per route, not per request: what a decision, or the limiter's failure, turns into.
  const onDecision = (decision: RateLimitDecision): LimitOutcome => {
    if (decision.allowed) return { kind: "next", headers: sendHeaders ? rateLimitHeaders(decision) : NO_HEADERS };
    return errorOutcome(rateLimitedError(decision));
  };
  const decide = (key: string, checkOptions?: CheckOptions): Promise<LimitOutcome> =>
    limiter.check(key, checkOptions).then(onDecision, onCheckFailed);
  const decideKey = (key: string | undefined): LimitOutcome | Promise<LimitOutcome> =>
    key === undefined ? PASS : decide(key);

  /** The options that need a look at the request before its key (lists, skip) or beside it (cost, limit). */
  async function limitWithOptions(req: Req): Promise<LimitOutcome> {
    if (allowed || denied) {
      const address = addressOf(req);
      if (address !== undefined && denied?.(address)) return errorOutcome(rateLimitedError(deniedDecision(limiter)));
      if (address !== undefined && allowed?.(address)) return PASS;
    }
    if (skip && (await skip(req))) return PASS;
    const key = await keyOf(req);
    if (key === undefined) return PASS;
    try {
      return await decide(
        key,
        cost || limit
          ? { cost: cost ? await cost(req) : undefined, limit: limit ? await limit(req) : undefined }
          : undefined,
      );
    } catch (err) {
      return onCheckFailed(err);
    }
  }

  const plain = !allowed && !denied && !skip && !cost && !limit;
  return function limitRequest(req: Req): Promise<LimitOutcome> {
    if (!plain) return limitWithOptions(req);
    // The usual route: a key (synchronous unless getUserId or getKey answers with a promise), then
    // one decision, with no async function of its own around it.
    try {
      const keyed = keyOf(req);
      if (keyed === undefined) return Promise.resolve(PASS);
      return typeof keyed === "string" ? decide(keyed) : Promise.resolve(keyed).then(decideKey);
    } catch (err) {
      return rejectedWith(err);
    }
  };
}

/** RATE_LIMITER_UNAVAILABLE (the store failed and the limiter fails closed) is an answer; anything else goes on. */
function onCheckFailed(err: unknown): LimitOutcome {
  if (isRateLimitError(err)) return errorOutcome(err);
  throw err;
}

const PASS: LimitOutcome = { kind: "next", headers: NO_HEADERS };

/** A deny-listed address: banned with no end, so no Retry-After. */
function deniedDecision(limiter: RateLimiter): RateLimitDecision {
  return {
    allowed: false,
    policy: limiter.policy,
    remaining: 0,
    resetMs: 0,
    nextMs: 0,
    retryAfterMs: Infinity,
    counted: true,
    banned: true,
  };
}

function errorOutcome(error: RateLimitError): LimitOutcome {
  return { kind: "send", status: error.status, headers: error.headers, body: JSON.stringify(error.toJSON()) };
}
