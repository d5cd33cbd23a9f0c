// The CPU of answering one typed problem on Hono, in process, without HTTP: ours (the error created by a
// definition, answered by `problemDetails().onError`) against hono-problem-details, alternated.
// `BENCH_HONO_PROBLEM_DETAILS=<its src/index.ts> npx tsx bench/problem-cpu.ts [calls] [rounds]`: bundled as a user's
// build would run it; prints µs per answer per round, the median, and ours against the peer (median of per-round ratios).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bundle } from "./support/bundle";
import { checkCounts, printRounds, type RoundsRow } from "./support/in-process-rounds";
import { PEER_ENV } from "./scenarios/error-handler";

const SOURCE = fileURLToPath(new URL("./core/problem-pair-loop.ts", import.meta.url));
const BUNDLE = fileURLToPath(new URL("./.build/problem-pair-loop.mjs", import.meta.url));
const PEER_BUNDLE = fileURLToPath(new URL("./.build/hono-problem-details.mjs", import.meta.url));
const [calls = "200000", rounds = "5"] = process.argv.slice(2);

async function main(): Promise<void> {
  checkCounts({ calls, rounds });
  const peer = process.env[PEER_ENV];
  if (!peer || !existsSync(peer)) throw new Error(`Set ${PEER_ENV} to hono-problem-details' src/index.ts.`);
  await Promise.all([bundle(SOURCE, BUNDLE), bundle(peer, PEER_BUNDLE)]);
  const out = execFileSync(process.execPath, [BUNDLE, PEER_BUNDLE, calls, rounds], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const rows = JSON.parse(out) as RoundsRow[];
  printRounds(
    rows,
    rows.find((row) => row.name === "hono-problem-details"),
    "the peer",
    28,
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
