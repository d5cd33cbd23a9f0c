// What the server keeps about an error: a log line with its name, message and code, and its stack at debug.
import { schemaIssues, type ProblemIssue, type SchemaIssue } from "./issues";
import { errorStack, errorSummary as safeSummary, type ErrorSummary as SafeSummary } from "./error-summary";
import type { BlockLogger as ProblemLogger } from "./logger";

/**
 * Logs one answered error. Only `name`, `message`, `code` and a numeric status are copied: logging the whole object
 * would write what client libraries attach to their errors (request headers with credentials,
 * configs, sockets); a URL's credentials in the message or stack are masked. Server errors log at
 * error and add the stack at debug; client errors at info.
 *
 * @example
 * logProblem(logger, err, "req_1", 500, "INTERNAL_ERROR", undefined);
 * // error {"requestId":"req_1","status":500,"code":"INTERNAL_ERROR","error":{"name":"Error","message":"connect ECONNREFUSED"}}
 */
export function logProblem(
  logger: ProblemLogger,
  err: unknown,
  requestId: string,
  status: number,
  code: string,
  traceId: string | undefined,
): void {
  if (status < 500) {
    // Every client error passes here: its line is built only for a logger that writes info.
    if (logger.isLevelEnabled?.("info") !== false)
      logger.info({ ...answerFields(requestId, status, code, traceId), error: errorSummary(err) }, "request rejected");
    return;
  }
  const error = errorSummary(err);
  logger.error({ ...answerFields(requestId, status, code, traceId), error }, "request failed");
  const stack = errorStack(err);
  if (stack === undefined || logger.debug === undefined) return;
  // The stack's first line repeats the message: when the message was replaced, so is that line.
  const frames = stack.indexOf("\n    at ");
  const safeStack = error.issues && frames >= 0 ? `${error.name}: ${error.message}${stack.slice(frames)}` : stack;
  logger.debug?.({ requestId, stack: safeStack }, "request failed: stack");
}

function answerFields(
  requestId: string,
  status: number,
  code: string,
  traceId: string | undefined,
): Record<string, unknown> {
  return traceId === undefined ? { requestId, status, code } : { requestId, status, code, traceId };
}

type ErrorSummary = SafeSummary & { status?: number; issues?: ProblemIssue[] };

function errorSummary(err: unknown): ErrorSummary {
  const summary: ErrorSummary = safeSummary(err);
  if (typeof err !== "object" || err === null) return summary;
  const { issues } = err as { issues?: unknown };
  // A validation library's message quotes the rejected value (valibot: 'but received "4242 4242 4242 4242"'): its issues say where instead.
  if (Array.isArray(issues))
    Object.assign(summary, {
      message: `${issues.length} validation issue(s)`,
      issues: schemaIssues(issues as SchemaIssue[]),
    });
  const status = carriedStatus(err);
  return status === undefined ? summary : { ...summary, status };
}

/** The status the error carries itself: for a downstream's error, what that service answered (kept for the log only). */
function carriedStatus(err: object): number | undefined {
  const { status, statusCode, response } = err as {
    status?: unknown;
    statusCode?: unknown;
    response?: { status?: unknown; statusCode?: unknown } | null;
  };
  const candidates = [status, statusCode, response?.status, response?.statusCode];
  return candidates.find((value): value is number => typeof value === "number");
}
