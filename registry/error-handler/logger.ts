// The logger a block writes to (any pino-style object with `info(obj, msg)` methods), and the default without one.
// One source for every block: the idempotency, rate-limiter, outbox and error-handler blocks vendor identical copies.

export type LogMethod = (obj: Record<string, unknown>, msg: string) => void;

/**
 * Duck-typed so a pino instance, the logger block's, Fastify's `app.log` or `createLoggerAdapter(...)`
 * fit without an import. Each block exports it under its own name too (`IdempotencyLogger`, ...).
 */
export type BlockLogger = {
  debug?: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  /** pino's: when present, a line of a level it reports off is never built. */
  isLevelEnabled?: (level: string) => boolean;
};

const noLine: LogMethod = () => {};

/**
 * The default when no `logger` is given: warnings and errors as one JSON line each on stderr, so a
 * failing store or a 500 is never silent; nothing below warn is built.
 *
 * @example
 * consoleLogger.error({ requestId: "req_1" }, "request failed"); // stderr: {"level":"error","msg":"request failed","requestId":"req_1"}
 */
export const consoleLogger: BlockLogger = {
  error: (obj, msg) => console.error(JSON.stringify({ level: "error", msg, ...obj })),
  warn: (obj, msg) => console.error(JSON.stringify({ level: "warn", msg, ...obj })),
  info: noLine,
  isLevelEnabled: (level) => level === "warn" || level === "error",
};

/** Writes nothing: for tests, or an app that really wants no line from a block. */
export const silentLogger: BlockLogger = {
  info: noLine,
  warn: noLine,
  error: noLine,
  isLevelEnabled: () => false,
};
