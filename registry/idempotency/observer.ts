// Turns each handler decision into one structured log line and its metric.
import type { IdempotencyLogger } from "./logger";
import type { IdempotencyCounter, IdempotencyMetrics } from "./metrics";
import type { IdempotencyScope } from "./types";

type Level = "debug" | "info" | "warn" | "error";

/** Every line carries the scope and a status, so one query finds every decision about a key. */
export type DecisionFields = Partial<IdempotencyScope> & { status: string } & Record<string, unknown>;

/**
 * The fields of a line about one key. Spelled out rather than `{ ...scope, status }`: V8 copies a
 * spread into a larger literal slowly, and this runs on every request.
 */
export function keyFields(scope: IdempotencyScope, status: string): DecisionFields {
  return { operation: scope.operation, userId: scope.userId, key: scope.key, status };
}

export class Observer {
  private readonly logger: IdempotencyLogger;
  private readonly metrics: IdempotencyMetrics;

  constructor(
    logger: IdempotencyLogger,
    metrics: IdempotencyMetrics,
  ) {
    this.logger = logger;
    this.metrics = metrics;
  }

  /** Logs one decision and counts it (with the scope's operation as a label when the metric has one). */
  decision(level: Level, msg: string, fields: DecisionFields, counter?: IdempotencyCounter, labels: Record<string, string> = {}): void {
    this.log(level, msg, fields);
    if (counter) this.count(counter, labels);
  }

  count(counter: IdempotencyCounter, labels: Record<string, string>, value = 1): void {
    try {
      this.metrics.increment(counter, labels, value);
    } catch (err) {
      this.log("warn", "idempotency: metrics sink threw", { status: "METRICS_ERROR", err });
    }
  }

  duration(operation: string, outcome: string, seconds: number): void {
    try {
      this.metrics.observe("duration", seconds, { operation, outcome });
    } catch (err) {
      this.log("warn", "idempotency: metrics sink threw", { status: "METRICS_ERROR", err });
    }
  }

  /**
   * An `err` field is logged as `{ name, message, code }`, never the whole object: client errors
   * (axios, got) carry the request's headers, bearer token included. Its stack goes to a debug line.
   */
  log(level: Level, msg: string, fields: DecisionFields): void {
    if (fields.err === undefined) return this.write(level, msg, fields);
    const err = errorSummary(fields.err);
    this.write(level, msg, { ...fields, err });
    const stack = (fields.err as { stack?: unknown } | null)?.stack;
    if (typeof stack === "string") this.write("debug", `${msg} (stack)`, { ...fields, err: { ...err, stack } });
  }

  private write(level: Level, msg: string, fields: DecisionFields): void {
    const write = this.logger[level] ?? (level === "debug" ? undefined : this.logger.info);
    if (!write) return;
    try {
      write.call(this.logger, fields, msg);
    } catch {
      // A broken logger must never change the outcome of a request.
    }
  }
}

/**
 * What a log line keeps of an error: enough to recognise it, nothing it happens to carry.
 *
 * @example
 * errorSummary(axiosError); // { name: "AxiosError", message: "Request failed with status code 502", code: "ERR_BAD_RESPONSE" }
 */
export function errorSummary(err: unknown): { name: string; message: string; code?: string | number } {
  if (typeof err !== "object" || err === null) return { name: typeof err, message: String(err) };
  const { name, message, code } = err as { name?: unknown; message?: unknown; code?: unknown };
  // `class CardDeclined extends Error {}` inherits the name "Error": its class says more.
  const className = err.constructor?.name;
  const summary: { name: string; message: string; code?: string | number } = {
    name: typeof name === "string" && !(name === "Error" && className) ? name : (className ?? "Object"),
    message: typeof message === "string" ? message : "",
  };
  if (typeof code === "string" || typeof code === "number") summary.code = code;
  return summary;
}
