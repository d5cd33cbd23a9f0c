// What the server keeps about an error: a log line with its name, message and code, and its stack at debug.

export type LogMethod = (obj: Record<string, unknown>, msg: string) => void;

/** Any pino-style logger: pino itself, the logger block's, Fastify's `app.log`. */
export type ProblemLogger = { error: LogMethod; info: LogMethod; debug?: LogMethod };

/** Used when no `logger` is given: server errors as one JSON line on stderr, nothing else. */
export const consoleLogger: ProblemLogger = {
  error: (obj, msg) => console.error(JSON.stringify({ level: "error", msg, ...obj })),
  info() {},
};

/**
 * Logs one answered error. Only `name`, `message` and `code` are copied: logging the whole object
 * would write what client libraries attach to their errors (request headers with credentials,
 * configs, sockets). Server errors log at error and add the stack at debug; client errors at info.
 *
 * @example
 * logProblem(logger, err, { requestId: "req_1", status: 500, code: "INTERNAL_ERROR" });
 * // error {"requestId":"req_1","status":500,"code":"INTERNAL_ERROR","error":{"name":"Error","message":"connect ECONNREFUSED"}}
 */
export function logProblem(logger: ProblemLogger, err: unknown, answer: { requestId: string; status: number; code: string }): void {
  const fields = { ...answer, error: errorSummary(err) };
  if (answer.status < 500) return logger.info(fields, "request rejected");
  logger.error(fields, "request failed");
  const stack = (err as { stack?: unknown } | null)?.stack;
  if (typeof stack === "string") logger.debug?.({ requestId: answer.requestId, stack }, "request failed: stack");
}

function errorSummary(err: unknown): { name: string; message: string; code?: string | number } {
  if (typeof err !== "object" || err === null) return { name: typeof err, message: String(err) };
  const { name, message, code } = err as { name?: unknown; message?: unknown; code?: unknown };
  const summary = { name: typeof name === "string" ? name : "Object", message: typeof message === "string" ? message : "" };
  return typeof code === "string" || typeof code === "number" ? { ...summary, code } : summary;
}
