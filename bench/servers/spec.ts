// What one benchmark server process runs: a framework, a variant of the route, and its backing services.

/** `nestjs` runs on the Express platform, `nestjs-fastify` on the Fastify one; `fetch` is Node 20's standard Request/Response. */
export type Framework = "express" | "fastify" | "hono" | "koa" | "nestjs" | "nestjs-fastify" | "fetch";

/**
 * `block`: our adapter; `noop-interceptor` (NestJS): the bare controller behind a global interceptor
 * that only calls `next.handle()`, what Nest's interceptor machinery costs before ours does anything; `floor`: the hand-written two-statement route; `rate-limited`: the bare route
 * behind the rate-limiter block's middleware (its `backend` is the limiter's store); `error-handler`: a
 * route whose error our error-handler answers as a problem; the rest: peer libraries.
 */
export type Variant =
  | "bare"
  | "noop-interceptor"
  | "block"
  | "floor"
  | "rate-limited"
  | "express-idempotency"
  | "node-idempotency"
  | "rate-limiter-flexible"
  | "fastify-rate-limit"
  | "error-handler"
  | "hono-problem-details";

/**
 * `postgres+redis` is the PostgresStore with a RedisCache; `postgres-prepared` the PostgresStore over
 * `preparedStatements(pool)`; `redis-store` our RedisStore (no cache) on ioredis, `redis-store-node-redis` the same
 * on a node-redis client; for peers `redis` is their own Redis storage.
 */
export type Backend =
  | "none"
  | "memory"
  | "postgres"
  | "postgres-prepared"
  | "postgres+redis"
  | "redis"
  | "redis-store"
  | "redis-store-node-redis";

/**
 * How our block is mounted: the `idempotent(handler, { run })` wrapper or the capture middleware. NestJS
 * has one style (`@Idempotent()` with the interceptor: "wrapper"); on fetch, "capture" is
 * `withIdempotency(handler, options, route)`, which records the `Response` the route returns.
 */
export type Style = "wrapper" | "capture";

export type ServerSpec = {
  framework: Framework;
  variant: Variant;
  backend: Backend;
  style?: Style;
  /** PostgreSQL table (created and dropped by the parent), when the backend uses one. */
  table?: string | undefined;
  /**
   * `rate-limited` only: false passes `headers: false` to `rateLimit()`, so allowed responses carry no
   * RateLimit headers, as a peer that sends none. @default true
   */
  limiterHeaders?: boolean | undefined;
  /** `hono-problem-details`: its bundle (built by the parent from the source it was pointed to). */
  peerModule?: string | undefined;
  /** The rate limiter's PostgreSQL table, for `rate-limited` on `postgres`. */
  rateLimitTable?: string | undefined;
  /** Prefix of every Redis key this server writes, so the run can delete exactly its own keys. */
  redisPrefix?: string;
  databaseUrl: string;
  redisUrl: string;
  poolSize: number;
};

/** The route every server exposes; the response body is the same small JSON everywhere. */
export const ROUTE = "/payments";

export function specLabel(spec: ServerSpec): string {
  if (spec.variant === "bare" || spec.variant === "floor" || spec.variant === "noop-interceptor")
    return `${spec.framework} ${spec.variant}`;
  if (spec.variant === "error-handler" || spec.variant === "hono-problem-details")
    return `${spec.framework} ${spec.variant}`;
  if (spec.variant === "rate-limited")
    return `${spec.framework} rateLimit() ${spec.backend}${spec.limiterHeaders === false ? " (no headers)" : ""}`;
  const who = spec.variant === "block" ? `blocks${spec.style === "capture" ? " (capture)" : ""}` : spec.variant;
  return `${spec.framework} ${who} ${spec.backend}`;
}
