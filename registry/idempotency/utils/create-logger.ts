// Bridges any logging function to the handler's pino-style logger interface.
import type { BlockLogger as IdempotencyLogger } from "../logger";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFunction = (level: LogLevel, msg: string, meta?: Record<string, unknown>) => void;

/**
 * Wraps a `(level, msg, meta)` function as an `IdempotencyLogger`.
 *
 * @example
 * const logger = createLoggerAdapter((level, msg, meta) => console[level](msg, meta ?? ""));
 * const handler = new IdempotencyHandler(store, undefined, { logger });
 */
export function createLoggerAdapter(log: LogFunction): IdempotencyLogger {
  const at = (level: LogLevel) =>
    function logAt(obj: Record<string, unknown>, msg: string) {
      log(level, msg, obj);
    };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}
