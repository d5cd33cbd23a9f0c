// The logger the handler writes to: any pino-style object with `info(obj, msg)` methods.

export type LogMethod = (obj: Record<string, unknown>, msg: string) => void;

/** Duck-typed so a pino instance, the logger block or `createLoggerAdapter(...)` all fit. */
export type IdempotencyLogger = {
  debug?: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
};

export const silentLogger: IdempotencyLogger = {
  info() {},
  warn() {},
  error() {},
};
