// The rate-limiter block's public surface: the limiter, its stores, errors, headers and observability hooks.
export { RateLimiter, rateLimitedError } from "./limiter";
export type { BanOptions, CheckOptions, OnStoreError, RateLimiterOptions } from "./limiter";
export { RateLimitError, RateLimitErrorCode, RATE_LIMIT_ERROR_STATUS, isRateLimitError } from "./errors";
export { checkPolicy, costRate, decisionOf, gcraStep, rateOf } from "./gcra";
export { formatRateLimit, formatRateLimitPolicy, rateLimitHeaders, retryAfterSeconds } from "./http/headers";
export { MemoryRateLimitStore } from "./stores/memory-store";
export type { MemoryRateLimitStoreOptions } from "./stores/memory-store";
export { RedisRateLimitStore, GCRA_SCRIPT } from "./stores/redis-store";
export type { RedisRateLimitStoreOptions, RedisScriptClient } from "./stores/redis-store";
export { PostgresRateLimitStore } from "./stores/postgres-store";
export type { PostgresRateLimitStoreOptions, SqlClient } from "./stores/postgres-store";
export {
  checkTableName,
  DEFAULT_RATE_LIMIT_TABLE,
  dropStatements,
  schemaSql,
  schemaStatements,
  schemaTables,
} from "./stores/postgres-schema";
export { RATE_LIMIT_METRICS, noopMetrics } from "./metrics";
export type { MetricLabels, RateLimitCounter, RateLimitHistogram, RateLimitMetrics } from "./metrics";
export { DECISION_LOGS } from "./observer";
export { consoleLogger, silentLogger } from "./logger";
export type { BlockLogger as RateLimitLogger, LogMethod } from "./logger";
export type { GcraRate, RateLimitDecision, RateLimitPolicy, RateLimitStore, StoreDecision } from "./types";
