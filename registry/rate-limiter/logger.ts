// The logger the limiter writes to: any pino-style object with `info(obj, msg)` methods.

export type LogMethod = (obj: Record<string, unknown>, msg: string) => void;

/** Duck-typed so a pino instance or the logger block fit without an import. */
export type RateLimitLogger = {
  debug?: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  /** pino's: when present, a line of a level it reports off is never built. */
  isLevelEnabled?: (level: string) => boolean;
};

export const silentLogger: RateLimitLogger = {
  info() {},
  warn() {},
  error() {},
};
