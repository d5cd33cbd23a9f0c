// What one benchmark server process runs: a framework, a variant of the route, and its backing services.

export type Framework = "express" | "fastify" | "hono";

/** `block`: our adapter; `floor`: the hand-written two-statement route; the rest: peer libraries. */
export type Variant = "bare" | "block" | "floor" | "express-idempotency" | "node-idempotency";

/**
 * `postgres+redis` is the PostgresStore with a RedisCache; `postgres-prepared` the PostgresStore over
 * `preparedStatements(pool)`; `redis-store` our RedisStore (no cache); for peers `redis` is their own Redis storage.
 */
export type Backend = "none" | "memory" | "postgres" | "postgres-prepared" | "postgres+redis" | "redis" | "redis-store";

/** How our block is mounted: the `idempotent(handler, { run })` wrapper or the capture middleware. */
export type Style = "wrapper" | "capture";

export type ServerSpec = {
  framework: Framework;
  variant: Variant;
  backend: Backend;
  style?: Style;
  /** PostgreSQL table (created and dropped by the parent), when the backend uses one. */
  table?: string | undefined;
  /** Prefix of every Redis key this server writes, so the run can delete exactly its own keys. */
  redisPrefix?: string;
  databaseUrl: string;
  redisUrl: string;
  poolSize: number;
};

/** The route every server exposes; the response body is the same small JSON everywhere. */
export const ROUTE = "/payments";

export function specLabel(spec: ServerSpec): string {
  if (spec.variant === "bare" || spec.variant === "floor") return `${spec.framework} ${spec.variant}`;
  const who = spec.variant === "block" ? `blocks${spec.style === "capture" ? " (capture)" : ""}` : spec.variant;
  return `${spec.framework} ${who} ${spec.backend}`;
}
