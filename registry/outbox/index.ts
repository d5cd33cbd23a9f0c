// The outbox block's public surface.
export { addToOutbox, type AddToOutboxOptions, type NewOutboxMessage } from "./add-to-outbox";
export { startOutboxRelay, type OutboxRelay } from "./relay";
export type { ListenClient, OnDead, OutboxMessage, OutboxRelayOptions, Publish } from "./relay-options";
export { cleanupOutbox } from "./cleanup";
export { OutboxError, isOutboxError, OUTBOX_INVALID_MESSAGE, OUTBOX_INVALID_OPTIONS } from "./errors";
export { OUTBOX_METRICS, noopMetrics, type OutboxMetrics, type OutboxCounter, type OutboxGauge } from "./metrics";
export { consoleLogger, silentLogger, type BlockLogger as OutboxLogger, type LogMethod } from "./logger";
export {
  checkTableName,
  DEFAULT_OUTBOX_TABLE,
  dropStatements,
  schemaSql,
  schemaStatements,
  schemaTables,
} from "./postgres-schema";
export type { OutboxDatabase, SqlClient } from "./sql-client";
