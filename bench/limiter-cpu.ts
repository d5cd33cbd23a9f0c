// The CPU of one allowed rate-limit decision on Redis, in process, without HTTP: ours (the limiter alone, and the
// shared HTTP step with and without headers) against rate-limiter-flexible's consume() and a bare EVALSHA.
// `npx tsx bench/limiter-cpu.ts [calls] [rounds]`: bundled as a user's build would run it; prints µs per call per
// round, the median, and each variant's ratio to rate-limiter-flexible (median of per-round ratios).
// LIMITER_CPU_FAKE=1: every side's Redis client answers at once in process (only their JavaScript is measured);
// LIMITER_CPU_ONLY=<part of a name>: only those variants.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { settings, assertLoopback } from "./config";
import { bundle } from "./support/bundle";
import { checkCounts, printRounds, type RoundsRow } from "./support/in-process-rounds";
import { runId } from "./support/services";

const SOURCE = fileURLToPath(new URL("./core/limiter-pair-loop.ts", import.meta.url));
const BUNDLE = fileURLToPath(new URL("./.build/limiter-pair-loop.mjs", import.meta.url));
const [calls = "50000", rounds = "5"] = process.argv.slice(2);

async function main(): Promise<void> {
  checkCounts({ calls, rounds });
  await bundle(SOURCE, BUNDLE);
  const out = execFileSync(
    process.execPath,
    [BUNDLE, assertLoopback(settings.redisUrl), calls, rounds, `bench:${runId}:limiter-cpu:`],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  const rows = JSON.parse(out) as RoundsRow[];
  printRounds(
    rows,
    rows.find((row) => row.name.startsWith("rate-limiter-flexible")),
    "rlf",
    46,
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
