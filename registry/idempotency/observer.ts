// Records each handler decision of the table in decisions.ts: one structured log line and its counters.
import { DECISIONS, type Decision, type DecisionLevel, type DecisionName, type DecisionStatus } from "./decisions";
import { errorStack, errorSummary } from "./error-summary";
import { silentLogger, type BlockLogger as IdempotencyLogger } from "./logger";
import { noopMetrics, type IdempotencyCounter, type IdempotencyMetrics } from "./metrics";
import type { IdempotencyScope } from "./types";

/** Every line carries the scope and a status, so one query finds every decision about a key. */
export type DecisionFields = Partial<IdempotencyScope> & { status: DecisionStatus } & Record<string, unknown>;

/** What a line says besides the scope and the decision's status (`status` here replaces it: a conflict names the stored record's). */
export type DecisionDetails = {
  status?: DecisionStatus;
  err?: unknown;
  retryCount?: number;
  attempt?: number;
  method?: string;
  ran?: boolean;
  source?: "cache" | "store";
  deleted?: number;
  /** How a duplicate's wait for the first attempt ended (see wait-for-record.ts), and how long it took. */
  outcome?: string;
  waitedMs?: number;
};

export class Observer {
  private readonly logger: IdempotencyLogger;
  private readonly metrics: IdempotencyMetrics;
  /** False for the handler's defaults (no logger, no metrics): then a decision builds no line and no labels. */
  private readonly logging: boolean;
  /** False for the no-op sink: callers skip what only a metric needs (a clock read, a labels object). */
  readonly counting: boolean;

  constructor(logger: IdempotencyLogger, metrics: IdempotencyMetrics) {
    this.logger = logger;
    this.metrics = metrics;
    this.logging = logger !== silentLogger;
    this.counting = metrics !== noopMetrics;
  }

  /**
   * Logs one decision of the table and moves its counters. The fields are spelled out rather than
   * `{ ...scope, status }`: V8 copies a spread into a larger literal slowly, and this runs on every request.
   *
   * @example
   * observer.record("transientFailure", scope, { retryCount, err });
   */
  record(name: DecisionName, scope: IdempotencyScope | undefined, details?: DecisionDetails): void {
    const decision: Decision = DECISIONS[name];
    // A logger without `debug`, or one whose level is above the decision's, writes no line: nothing to build for it (every fresh request records one).
    if (this.logging && this.writes(decision.level)) {
      const fields: DecisionFields =
        scope === undefined
          ? { status: decision.status }
          : { operation: scope.operation, userId: scope.userId, key: scope.key, status: decision.status };
      if (details !== undefined) Object.assign(fields, details);
      this.log(decision.level, decision.msg, fields);
    }
    if (decision.counts === undefined || !this.counting) return;
    for (const { counter, labels, perOperation } of decision.counts) {
      this.count(
        counter,
        perOperation === false || scope === undefined ? { ...labels } : { operation: scope.operation, ...labels },
      );
    }
  }

  count(counter: IdempotencyCounter, labels: Record<string, string>, value = 1): void {
    if (!this.counting) return;
    try {
      this.metrics.increment(counter, labels, value);
    } catch (err) {
      this.record("metricsSinkThrew", undefined, { err });
    }
  }

  duration(operation: string, outcome: string, seconds: number): void {
    if (!this.counting) return;
    try {
      this.metrics.observe("duration", seconds, { operation, outcome });
    } catch (err) {
      this.record("metricsSinkThrew", undefined, { err });
    }
  }

  /**
   * An `err` field is logged as its `errorSummary` (error-summary.ts), never the whole object: client
   * errors (axios, got) carry the request's headers, bearer token included. Its stack goes to a debug line.
   */
  private log(level: DecisionLevel, msg: string, fields: DecisionFields): void {
    if (fields.err === undefined) {
      this.write(level, msg, fields);
      return;
    }
    const err = errorSummary(fields.err);
    this.write(level, msg, { ...fields, err });
    const stack = errorStack(fields.err);
    if (stack !== undefined && this.writes("debug"))
      this.write("debug", `${msg} (stack)`, { ...fields, err: { ...err, stack } });
  }

  private writes(level: DecisionLevel): boolean {
    return (level !== "debug" || this.logger.debug !== undefined) && this.logger.isLevelEnabled?.(level) !== false;
  }

  private write(level: DecisionLevel, msg: string, fields: DecisionFields): void {
    const write = this.logger[level] ?? (level === "debug" ? undefined : this.logger.info);
    if (!write) return;
    try {
      write.call(this.logger, fields, msg);
    } catch {
      // A broken logger must never change the outcome of a request.
    }
  }
}
