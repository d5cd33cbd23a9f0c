// In-memory logger and metrics sinks that record what the handler reported, for assertions.
import type { BlockLogger as IdempotencyLogger } from "../logger";
import type { IdempotencyMetrics, MetricLabels } from "../metrics";

export type LogLine = { level: string; msg: string } & Record<string, unknown>;

export function recordingLogger(): IdempotencyLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => void lines.push({ ...obj, level, msg });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** Counts per metric id and label set, e.g. `counts.get('duplicates{operation=op,status=SUCCESS}')`. */
export function recordingMetrics(): IdempotencyMetrics & { total(id: string, labels?: MetricLabels): number } {
  const counts = new Map<string, number>();
  const id = (name: string, labels: MetricLabels) =>
    `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
  return {
    increment(name, labels, value = 1) {
      counts.set(id(name, labels), (counts.get(id(name, labels)) ?? 0) + value);
    },
    observe() {},
    /** The sum over every label set that includes `labels`. */
    total(name, labels = {}) {
      let sum = 0;
      for (const [key, value] of counts) {
        if (!key.startsWith(`${name}[`)) continue;
        const entries = JSON.parse(key.slice(name.length)) as Array<[string, string]>;
        if (Object.entries(labels).every(([k, v]) => entries.some(([ek, ev]) => ek === k && ev === v))) sum += value;
      }
      return sum;
    },
  };
}
