// What every adapter shares: the key of a request, the limiter's decision, and the response it implies.
import { isRateLimitError, type RateLimitError } from "../errors";
import { rateLimitedError, type RateLimiter } from "../limiter";
import { addressReader, type TrustProxy } from "./client-address";
import { rateLimitHeaders } from "./headers";
import { idempotencyKeyOf } from "./idempotency-key";

type MaybePromise<T> = T | Promise<T>;

export type RateLimitRouteOptions<Req> = {
  /** The caller. @default the framework's user (`req.user.id` or equivalent), else the client address */
  getUserId?: ((req: Req) => MaybePromise<string | number | undefined>) | undefined;
  /**
   * Proxies in front of the app: how many append to `X-Forwarded-For`, or their addresses and CIDRs.
   * The client address is the entry that many hops from our side, never the leftmost (which the
   * client writes). The framework's own trust-proxy setting is not used. @default 0 (the socket's peer)
   */
  trustProxy?: TrustProxy | undefined;
  /** Anonymous IPv6 callers are keyed by this network prefix: one site holds a whole /56. @default 56 */
  ipv6Prefix?: number | undefined;
  /** The route part of the key. @default "<METHOD> <route path template>" */
  getRoute?: ((req: Req) => string) | undefined;
  /**
   * What to count: `"route"` keys by route + caller; `"idempotencyKey"` by route + caller + the
   * `Idempotency-Key` (read as the idempotency block reads it, so `K` and `"K"` are one key;
   * requests without one pass uncounted), which caps how often one key's retries reach the
   * idempotency store. @default "route"
   */
  keyBy?: "route" | "idempotencyKey" | undefined;
  /** Replaces the key entirely; `undefined` lets the request through uncounted. */
  getKey?: ((req: Req) => MaybePromise<string | undefined>) | undefined;
  /** Send `RateLimit-Policy` / `RateLimit` on allowed responses too, not only on 429. @default true */
  headers?: boolean | undefined;
};

/** How an adapter reads its framework's request. */
export type FrameworkDefaults<Req> = {
  userIdOf(req: Req): unknown;
  /** The socket's remote address (the last hop), when the runtime has one. */
  peerOf(req: Req): string | undefined;
  routeOf(req: Req): string;
  headerOf(req: Req, name: string): string | undefined;
};

/** `next`: run the route with these headers added; `send`: answer now (429 or 503). */
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
export function limitRoute<Req>(limiter: RateLimiter, options: RateLimitRouteOptions<Req>, defaults: FrameworkDefaults<Req>) {
  const keyOf = options.getKey ?? defaultKey(options, defaults);
  const sendHeaders = options.headers ?? true;

  return async function limitRequest(req: Req): Promise<LimitOutcome> {
    const key = await keyOf(req);
    if (key === undefined) return { kind: "next", headers: NO_HEADERS };
    try {
      const decision = await limiter.check(key);
      if (decision.allowed) return { kind: "next", headers: sendHeaders ? rateLimitHeaders(decision) : NO_HEADERS };
      return errorOutcome(rateLimitedError(decision));
    } catch (err) {
      // RATE_LIMITER_UNAVAILABLE: the store failed and the limiter fails closed.
      if (isRateLimitError(err)) return errorOutcome(err);
      throw err;
    }
  };
}

function errorOutcome(error: RateLimitError): LimitOutcome {
  return { kind: "send", status: error.status, headers: error.headers, body: JSON.stringify(error.toJSON()) };
}

/** JSON arrays keep the parts apart: no user id or header value can forge another caller's key. */
function defaultKey<Req>(options: RateLimitRouteOptions<Req>, defaults: FrameworkDefaults<Req>) {
  const addressOf = addressReader(options.trustProxy ?? 0, options.ipv6Prefix ?? 56);
  const callerOf = async (req: Req): Promise<string> => {
    const id = options.getUserId ? await options.getUserId(req) : defaults.userIdOf(req);
    if (typeof id === "string" || typeof id === "number") return `user:${id}`;
    // Without a user or an address every anonymous client shares one quota: say so in the key.
    return `ip:${addressOf(defaults.peerOf(req), defaults.headerOf(req, "x-forwarded-for")) ?? "unknown"}`;
  };
  const routeOf = options.getRoute ?? defaults.routeOf;

  if (options.keyBy === "idempotencyKey") {
    return async function idempotencyKeyKeyOf(req: Req): Promise<string | undefined> {
      // null (a header the idempotency block refuses) is one key per caller: garbage buys no quota.
      const key = idempotencyKeyOf(defaults.headerOf(req, "idempotency-key"));
      return key === undefined ? undefined : JSON.stringify([routeOf(req), await callerOf(req), key]);
    };
  }
  return async function routeKeyOf(req: Req): Promise<string> {
    return JSON.stringify([routeOf(req), await callerOf(req)]);
  };
}
