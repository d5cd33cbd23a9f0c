// Scenario 3b: what one request's idempotency work costs in process, without HTTP: the shared flow on
// MemoryStore and the pieces of work the contract requires. Explains what the HTTP rows cannot go below.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { bundle } from "../support/bundle";

export type CoreCostRow = { name: string; us: number };

const SOURCE = fileURLToPath(new URL("../core/request-work.ts", import.meta.url));
const BUNDLE = fileURLToPath(new URL("../.build/request-work.mjs", import.meta.url));

export async function coreCost(): Promise<CoreCostRow[]> {
  await bundle(SOURCE, BUNDLE);
  const rows = JSON.parse(
    execFileSync(process.execPath, [BUNDLE], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }),
  ) as CoreCostRow[];
  for (const row of rows)
    console.log(`  ${row.name.padEnd(76)} ${row.us}${row.name.startsWith("ratio: ") ? "x" : " µs"}`);
  return rows;
}
