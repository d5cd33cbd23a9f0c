// A helper several blocks vendor has one source: each block keeps its own copy (blocks stay standalone), and the copies never drift.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { IdempotencyErrorCode } from "../../registry/idempotency/errors";
import { BLOCK_ERROR_STATUSES } from "../../registry/idempotency/block-error-codes";
import { RateLimitErrorCode } from "../../registry/rate-limiter/errors";

const REGISTRY = path.resolve(import.meta.dirname, "../../registry");

/** Each group: the same file in several blocks, the first one being the source the others copy. */
const COPIES: string[][] = [
  // What of a URL in free text is safe to log, and what of an error.
  [
    "logger/redact-url.ts",
    "error-handler/redact-url.ts",
    "idempotency/redact-url.ts",
    "rate-limiter/redact-url.ts",
    "outbox/redact-url.ts",
  ],
  [
    "idempotency/error-summary.ts",
    "rate-limiter/error-summary.ts",
    "outbox/error-summary.ts",
    "error-handler/error-summary.ts",
  ],
  // The logger contract and the default without one.
  ["idempotency/logger.ts", "rate-limiter/logger.ts", "outbox/logger.ts", "error-handler/logger.ts"],
  // Store and cache time limits.
  ["idempotency/utils/time-limit.ts", "rate-limiter/utils/time-limit.ts"],
  // The prom-client sink under each block's metrics table.
  ["idempotency/utils/prometheus-sink.ts", "rate-limiter/utils/prometheus-sink.ts", "outbox/utils/prometheus-sink.ts"],
  // The request-id rule.
  ["logger/request-id.ts", "error-handler/request-id.ts"],
  // Code -> status of the blocks' own errors, which the error handler learns without importing them.
  ["idempotency/block-error-codes.ts", "rate-limiter/block-error-codes.ts", "error-handler/block-error-codes.ts"],
  // The route a request matched and its user, per framework; each block keeps its own policy on top in its adapter.
  ["idempotency/adapters/route-and-user-express.ts", "rate-limiter/adapters/route-and-user-express.ts"],
  ["idempotency/adapters/route-and-user-fastify.ts", "rate-limiter/adapters/route-and-user-fastify.ts"],
  ["idempotency/adapters/route-and-user-hono.ts", "rate-limiter/adapters/route-and-user-hono.ts"],
  ["idempotency/adapters/route-and-user-koa.ts", "rate-limiter/adapters/route-and-user-koa.ts"],
  ["idempotency/adapters/route-and-user-nestjs.ts", "rate-limiter/adapters/route-and-user-nestjs.ts"],
];

describe("helpers vendored by several blocks", () => {
  it.each(COPIES.map(([source = "", ...copies]) => [source, copies] as const))(
    "%s has identical copies in %j",
    (source, copies) => {
      const text = readFileSync(path.join(REGISTRY, source), "utf8");
      for (const copy of copies)
        expect(readFileSync(path.join(REGISTRY, copy), "utf8"), `${copy} drifted from ${source}: copy it again`).toBe(
          text,
        );
    },
  );

  it("the status table lists exactly the codes each block raises", () => {
    expect(Object.keys(BLOCK_ERROR_STATUSES.idempotency).sort()).toEqual(Object.values(IdempotencyErrorCode).sort());
    expect(Object.keys(BLOCK_ERROR_STATUSES.rateLimiter).sort()).toEqual(Object.values(RateLimitErrorCode).sort());
  });
});
