// In-memory logger and metrics sinks that record what the limiter reported, for assertions.
import type { BlockLogger as RateLimitLogger } from "../logger";
import type { MetricLabels, RateLimitMetrics } from "../metrics";

export type LogLine = { level: string; msg: string } & Record<string, unknown>;

export function recordingLogger(): RateLimitLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => void lines.push({ ...obj, level, msg });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** Counter totals by metric id and exact labels, e.g. `count("decisions", { policy: "p", outcome: "limited" })`. */
export function recordingMetrics(): RateLimitMetrics & { count(id: string, labels: MetricLabels): number } {
  const counts = new Map<string, number>();
  const keyOf = (id: string, labels: MetricLabels) =>
    `${id}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
  return {
    increment(id, labels, value = 1) {
      counts.set(keyOf(id, labels), (counts.get(keyOf(id, labels)) ?? 0) + value);
    },
    observe() {},
    count: (id, labels) => counts.get(keyOf(id, labels)) ?? 0,
  };
}
