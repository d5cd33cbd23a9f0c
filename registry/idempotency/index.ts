// The idempotency block's public surface: the handler, its errors and contracts, and the default store (`add` drops
// its lines when another store is chosen). What a selection may leave out is imported from its own file: RedisCache
// from caches/redis-cache (the cache feature), MemoryStore from testing/memory-store (copied with the tests).
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
export { PostgresStore } from "./stores/postgres-store";
export type { PostgresStoreOptions, SqlClient, TransactionalSqlClient } from "./stores/postgres-store";
export type { TransactionOptions } from "./transactional";
export type {
  IdempotentOperation,
  OperationContext,
  TransactionalOperation,
  TransactionContext,
} from "./operation-context";
export { preparedStatements } from "./stores/prepared-statements";
export type { PreparingClient } from "./stores/prepared-statements";
export { postgresSchema, postgresSchemaStatements } from "./stores/postgres-schema";
export { noopCache } from "./caches/noop-cache";
export { isCachedRecord } from "./caches/cached-record";
export { CONSUMER_OPERATION_PREFIX, checkSource, inboxScope } from "./consume";
export type { ConsumeOptions, ConsumeResult, InboxMessage, OnDead } from "./consume";
export { LeaseLostError } from "./execution";
export { UnkeptAnswer } from "./unkept-answer";
export { IDEMPOTENCY_METRICS, noopMetrics } from "./metrics";
export type { IdempotencyMetrics, IdempotencyCounter, IdempotencyHistogram, MetricLabels } from "./metrics";
export { consoleLogger, silentLogger } from "./logger";
export type { BlockLogger as IdempotencyLogger, LogMethod } from "./logger";
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
