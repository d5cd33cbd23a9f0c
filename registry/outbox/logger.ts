// The logger the relay writes to: any pino-style object with `info(obj, msg)` methods.

export type LogMethod = (obj: Record<string, unknown>, msg: string) => void;

/** Duck-typed so a pino instance or the logger block fit without an import. */
export type OutboxLogger = {
  debug?: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
};

export const silentLogger: OutboxLogger = {
  info() {},
  warn() {},
  error() {},
};

/** What of an error is safe to log: a driver's or broker client's error can carry credentials in its other fields. */
export function errorFields(error: unknown): { name: string; message: string; code?: string } {
  if (!(error instanceof Error)) return { name: "NonError", message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { name: error.name, message: error.message, ...(typeof code === "string" ? { code } : {}) };
}
