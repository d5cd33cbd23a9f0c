// Scenario 3b: what one request's idempotency work costs in process, without HTTP: the shared flow on
// MemoryStore and the pieces of work the contract requires. Explains what the HTTP rows cannot go below.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { settings } from "../config";
import { median, round } from "../report/stats";
import { bundle } from "../support/bundle";

export type CoreCostRow = { name: string; us: number };

const SOURCE = fileURLToPath(new URL("../core/request-work.ts", import.meta.url));
const BUNDLE = fileURLToPath(new URL("../.build/request-work.mjs", import.meta.url));

/**
 * The bundle run once per round, each run a process of its own; every row (ratios included, each taken
 * within its own run) is the median over the runs, so one disturbed process moves no verdict.
 */
export async function coreCost(): Promise<CoreCostRow[]> {
  await bundle(SOURCE, BUNDLE);
  const runs: CoreCostRow[][] = [];
  for (let run = 0; run < Math.max(1, settings.rounds); run++) {
    runs.push(
      JSON.parse(
        execFileSync(process.execPath, [BUNDLE], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }),
      ) as CoreCostRow[],
    );
  }
  const rows = (runs[0] ?? []).map(({ name }) => ({
    name,
    us: round(median(runs.map((rowsOfRun) => rowsOfRun.find((row) => row.name === name)?.us ?? Number.NaN))),
  }));
  for (const row of rows)
    console.log(`  ${row.name.padEnd(76)} ${row.us}${row.name.startsWith("ratio: ") ? "x" : " µs"}`);
  return rows;
}
