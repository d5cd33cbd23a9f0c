// The options of a limited route and how an adapter reads its framework's request: the types every route file shares.
import type { TrustProxy } from "./client-address";

export type MaybePromise<T> = T | Promise<T>;

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
  /** True lets the request through uncounted (health checks, internal callers by user id). */
  skip?: ((req: Req) => MaybePromise<boolean>) | undefined;
  /** Client addresses and CIDRs that are never limited (after `trustProxy`). */
  allowList?: readonly string[] | undefined;
  /** Client addresses and CIDRs always refused: 403 `RATE_LIMIT_BANNED`, no store call. */
  denyList?: readonly string[] | undefined;
  /** Units of the quota this request takes (1 to the limit), e.g. by batch size. @default 1 */
  cost?: ((req: Req) => MaybePromise<number>) | undefined;
  /** This caller's own limit per window (a plan tier); headers and the in-flight bound follow it. @default the limiter's */
  limit?: ((req: Req) => MaybePromise<number>) | undefined;
  /** Send `RateLimit-Policy` / `RateLimit` on allowed responses too, not only on 429. @default true */
  headers?: boolean | undefined;
};

/** How an adapter reads its framework's request. */
export type FrameworkDefaults<Req> = {
  userIdOf: (req: Req) => unknown;
  /** The socket's remote address (the last hop), when the runtime has one. */
  peerOf: (req: Req) => string | undefined;
  routeOf: (req: Req) => string;
  headerOf: (req: Req, name: string) => string | undefined;
};
