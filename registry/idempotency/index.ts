// The idempotency block's public surface: the handler, its stores and caches, and its errors.
export { IdempotencyHandler } from "./handler";
export type { ExecuteContext, ExecuteOptions, IdempotencyHandlerOptions } from "./handler";
export {
  IdempotencyError,
  IdempotencyErrorCode,
  DEFAULT_ERROR_STATUS,
  idempotencyErrorStatus,
  isIdempotencyError,
} from "./errors";
export type { IdempotencyStatusMap } from "./errors";
export { canonicalJson, hashPayload } from "./fingerprint";
export { MemoryStore } from "./stores/memory-store";
export type { MemoryStoreOptions } from "./stores/memory-store";
export { PostgresStore } from "./stores/postgres-store";
export type { PostgresStoreOptions, SqlClient, TransactionalSqlClient } from "./stores/postgres-store";
export type { TransactionOptions } from "./transactional";
export type { IdempotentOperation, OperationContext, TransactionalOperation, TransactionContext } from "./operation-context";
export { preparedStatements } from "./stores/prepared-statements";
export type { PreparingClient } from "./stores/prepared-statements";
export { postgresSchema, postgresSchemaStatements } from "./stores/postgres-schema";
export { RedisCache } from "./caches/redis-cache";
export type { RedisCacheOptions, RedisLike } from "./caches/redis-cache";
export { noopCache } from "./caches/noop-cache";
export { isCachedRecord } from "./caches/cached-record";
export { CONSUMER_OPERATION_PREFIX, checkSource, inboxScope } from "./consume";
export type { ConsumeOptions, ConsumeResult, InboxMessage, OnDead } from "./consume";
export { LeaseLostError } from "./execution";
export { IDEMPOTENCY_METRICS, noopMetrics } from "./metrics";
export type { IdempotencyMetrics, IdempotencyCounter, IdempotencyHistogram, MetricLabels } from "./metrics";
export type { IdempotencyLogger, LogMethod } from "./logger";
export { RecordStatus } from "./types";
export type {
  CachedRecord,
  CacheScope,
  CreateInput,
  CreateResult,
  ExecuteResult,
  IdempotencyCache,
  IdempotencyRecord,
  IdempotencyScope,
  IdempotencyStore,
  RecoveredRecord,
  RecoverInput,
} from "./types";
