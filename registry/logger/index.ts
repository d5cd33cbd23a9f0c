// The logger block's public surface. Framework middlewares live in ./adapters/<framework>, as in every block.
export { createLogger, logger, REDACT_PATHS } from "./logger";
export { serializeError } from "./redact-error";
export { getLoggerContext, runWithLoggerContext } from "./context";
export type { LoggerContext } from "./context";
export { REQUEST_ID_HEADER, resolveRequestId } from "./request-id";
export type { RequestIdOptions } from "./request-id";
