// Renders the scenarios' figures as docs/reliability.md: one table, the command that produced it, and when.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ScenarioFigures } from "./figures";

export const SCENARIO_COUNT = 8;
export const REPORT_PATH = "docs/reliability.md";

export function readFigures(dir: string): ScenarioFigures[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => /^scenario-\d+\.json$/.test(file))
    .map((file) => JSON.parse(readFileSync(path.join(dir, file), "utf8")) as ScenarioFigures)
    .sort((a, b) => a.id - b.id);
}

export function renderTable(figures: ScenarioFigures[]): string {
  const header =
    "| # | scenario | requests sent | executions counted | duplicates served | 409s | 503s | double executions | p99 latency | duration | notes |\n" +
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |";
  const rows = figures.map(
    (f) =>
      `| ${f.id} | ${f.title} | ${f.requests} | ${f.executions} | ${f.duplicatesServed} | ${f.conflicts409} | ${f.unavailable503} | ${f.doubleExecutions} | ${f.p99Ms} ms | ${f.durationS} s | ${f.notes} |`,
  );
  return [header, ...rows].join("\n");
}

export function renderReport(figures: ScenarioFigures[], totalSeconds: number): string {
  return `# Reliability figures

Produced by \`npm run test:reliability\` (the suite in \`test/reliability/\`, config
\`vitest.reliability.config.ts\`) on ${new Date().toISOString()}, against real PostgreSQL
(\`DATABASE_URL\`) and Redis (\`REDIS_URL\`). The file is rewritten at the end of every full run;
a run of only some scenarios prints its figures and leaves this file alone.

Machine: Node ${process.version}, ${os.cpus().length} CPU cores, ${os.platform()} ${os.arch()}.
Whole run: ${Math.round(totalSeconds)} s. Soak duration: ${Number(process.env.RELIABILITY_SOAK_SECONDS ?? 60)} s (\`RELIABILITY_SOAK_SECONDS\`).

${renderTable(figures)}

How to read it:
- **executions counted** are rows in a side-effect table that the protected operation itself writes
  (on the same PostgreSQL), so they count what really ran, not what the block reports.
- **double executions** are executions beyond the first per key. Where the scenario's notes say
  "by design", the second execution is the documented consequence of the fault being injected
  (a worker killed after its side effect, a stale worker that already ran, a success the store
  could not record); every other row must show 0, and the suite fails otherwise.
- **duplicates served** are answers replayed from a stored result; **409s** are in-progress,
  reused-key and failed-key answers; **503s** are \`STORE_UNAVAILABLE\` (or injected failures in the soak).
- Latencies are measured by the client over loopback on a shared 2-core machine: they show that
  nothing hangs, not how fast the block is (see \`bench/\` for that).
`;
}

/** Writes the report when every scenario produced figures; otherwise only prints what was measured. */
export function writeReport(dir: string, totalSeconds: number): string {
  const figures = readFigures(dir);
  if (figures.length === 0) return "reliability: no figures were produced (scenarios skipped?); docs/reliability.md left unchanged.";
  const failed = figures.filter((f) => !f.passed).map((f) => f.id);
  if (figures.length < SCENARIO_COUNT || failed.length > 0) {
    const why = failed.length > 0 ? `scenario(s) ${failed.join(", ")} failed` : `${figures.length}/${SCENARIO_COUNT} scenarios ran`;
    return `reliability: ${why}, so ${REPORT_PATH} is left unchanged:\n${renderTable(figures)}`;
  }
  mkdirSync(path.dirname(REPORT_PATH), { recursive: true });
  writeFileSync(REPORT_PATH, renderReport(figures, totalSeconds));
  return `reliability: wrote ${REPORT_PATH}\n${renderTable(figures)}`;
}
