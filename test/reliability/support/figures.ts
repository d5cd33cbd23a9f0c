// Per-scenario figures (requests, executions, duplicates, 409s, 503s, double executions, p99), saved for the report.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, inject } from "vitest";

export type ScenarioFigures = {
  id: number;
  title: string;
  requests: number;
  executions: number;
  duplicatesServed: number;
  conflicts409: number;
  unavailable503: number;
  doubleExecutions: number;
  p99Ms: number;
  durationS: number;
  notes: string;
  /** False when any test of the scenario failed: the report is then not written. */
  passed: boolean;
};

/** Counts answers as a scenario sends them; `save()` hands the totals to the report writer. */
export class FiguresCollector {
  private readonly latencies: number[] = [];
  private readonly started = performance.now();
  requests = 0;
  duplicatesServed = 0;
  conflicts409 = 0;
  unavailable503 = 0;
  private failed = false;

  /** Call inside the scenario's `describe`, so a failing test marks its figures as not passing. */
  readonly id: number;
  readonly title: string;

  constructor(id: number, title: string) {
    this.id = id;
    this.title = title;
    beforeEach(({ onTestFailed }) => onTestFailed(() => void (this.failed = true)));
  }

  /** One answer: its status, how long it took, and whether it was a replay of a stored result. */
  record(status: number, ms: number, replayed = false): void {
    this.requests++;
    this.latencies.push(ms);
    if (status === 409) this.conflicts409++;
    if (status === 503) this.unavailable503++;
    if (replayed) this.duplicatesServed++;
  }

  p99(): number {
    return percentile(this.latencies, 0.99);
  }

  save(totals: { executions: number; doubleExecutions: number; notes?: string }): ScenarioFigures {
    const figures: ScenarioFigures = {
      id: this.id,
      title: this.title,
      requests: this.requests,
      executions: totals.executions,
      duplicatesServed: this.duplicatesServed,
      conflicts409: this.conflicts409,
      unavailable503: this.unavailable503,
      doubleExecutions: totals.doubleExecutions,
      p99Ms: Math.round(this.p99()),
      durationS: Math.round((performance.now() - this.started) / 100) / 10,
      notes: totals.notes ?? "",
      passed: !this.failed,
    };
    const dir = inject("reliabilityFiguresDir");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `scenario-${this.id}.json`), JSON.stringify(figures));
    return figures;
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number;
}

/** Executions beyond the first, summed over keys: the number the block exists to keep at zero. */
export function doubleExecutions(executions: Map<string, number>): number {
  let extra = 0;
  for (const n of executions.values()) extra += Math.max(0, n - 1);
  return extra;
}

export function sum(executions: Map<string, number>): number {
  let total = 0;
  for (const n of executions.values()) total += n;
  return total;
}

declare module "vitest" {
  interface ProvidedContext {
    reliabilityFiguresDir: string;
  }
}
