// `npm run bench`: runs the selected scenarios, then writes bench/results/latest.json and latest.md.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { selectedScenarios, settings } from "./config";
import { renderMarkdown } from "./report/markdown";
import type { BenchResults } from "./report/results";
import { evaluateTargets } from "./report/targets";
import { cliTime, profileCliAdd } from "./scenarios/cli-time";
import { coreCost } from "./scenarios/core-cost";
import { httpOverhead } from "./scenarios/http-overhead";
import { stopLoad } from "./load/run-load";
import { jobScale } from "./scenarios/job-scale";
import { peers } from "./scenarios/peers";
import { roundTrips } from "./scenarios/round-trips";
import { serverCpu } from "./scenarios/server-cpu";
import { transactional } from "./scenarios/transactional";
import { mysqlFloor } from "./scenarios/mysql-floor";
import { outboxRelay } from "./scenarios/outbox-relay";
import { rateLimiter } from "./scenarios/rate-limiter";
import { errorHandler } from "./scenarios/error-handler";
import { scaleOut } from "./scenarios/scale-out-stores";
import { mainThreadProfile, summariseProfile } from "./support/cpu-profile";
import { deleteRunKeys, dropRunTables, openPool, openRedis, runId, stopEverything } from "./support/services";
import { PROFILE_DIR } from "./support/spawn-server";

const RESULTS = fileURLToPath(new URL("./results", import.meta.url));
const CLI_LIMIT_MS = 2_000;

async function cleanUp(): Promise<void> {
  await stopEverything();
  const pool = openPool(1);
  const redis = openRedis();
  try {
    await dropRunTables(pool);
    await deleteRunKeys(redis);
  } finally {
    redis.disconnect();
    await pool.end();
  }
}

function serverProfiles(): BenchResults["serverProfiles"] {
  if (!settings.cpuProfile || !existsSync(PROFILE_DIR)) return undefined;
  return readdirSync(PROFILE_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const file = mainThreadProfile(join(PROFILE_DIR, entry.name));
      return file ? [{ label: entry.name, summary: summariseProfile(file) }] : [];
    });
}

function cliWithProfile(): BenchResults["cli"] {
  const result = cliTime();
  const slowest = result.timings
    .flatMap((t) => ("medianMs" in t ? [t] : []))
    .sort((a, b) => b.medianMs - a.medianMs)[0];
  if (!slowest || slowest.medianMs < CLI_LIMIT_MS) return result;
  // Over the target: say where the time goes.
  const dir = join(PROFILE_DIR, "cli");
  mkdirSync(dir, { recursive: true });
  return { ...result, profileSummary: summariseProfile(profileCliAdd(slowest.fixture, dir)) };
}

async function main(): Promise<void> {
  const started = Date.now();
  const scenarios = selectedScenarios();
  const loadAverageAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  console.log(`run ${runId}: tables bench_${runId}_*, Redis keys containing ${runId}`);
  const pool = openPool(2);
  const partial: Omit<BenchResults, "targets" | "meta"> = {};
  try {
    if (scenarios.includes("round-trips")) {
      console.log("\n== round trips");
      partial.roundTrips = await roundTrips();
    }
    if (scenarios.includes("overhead")) {
      console.log("\n== HTTP overhead and the floor");
      partial.overhead = await httpOverhead(pool);
    }
    if (scenarios.includes("cpu")) {
      console.log("\n== server CPU per request");
      partial.cpu = await serverCpu(pool);
      console.log("\nin process, without HTTP:");
      partial.coreCost = await coreCost();
    }
    if (scenarios.includes("peers")) {
      console.log("\n== peers");
      partial.peers = await peers(pool);
    }
    if (scenarios.includes("transactional")) {
      console.log("\n== transactional mode and database clients");
      partial.transactional = await transactional();
    }
    if (scenarios.includes("mysql-floor")) {
      console.log("\n== MySqlStore against the MySQL floor");
      partial.mysqlFloor = await mysqlFloor();
    }
    if (scenarios.includes("outbox")) {
      console.log("\n== outbox relay");
      partial.outbox = await outboxRelay(pool);
    }
    if (scenarios.includes("rate-limiter")) {
      console.log("\n== rate limiter");
      partial.rateLimiter = await rateLimiter(pool);
    }
    if (scenarios.includes("error-handler")) {
      console.log("\n== error handler");
      partial.errorHandler = await errorHandler(pool);
    }
    if (scenarios.includes("scale-out")) {
      console.log("\n== scale-out stores");
      partial.scaleOut = await scaleOut(pool);
    }
    if (scenarios.includes("jobs")) {
      console.log("\n== maintenance jobs");
      partial.jobs = await jobScale();
    }
    if (scenarios.includes("cli")) {
      console.log("\n== CLI");
      partial.cli = cliWithProfile();
    }
    partial.serverProfiles = serverProfiles();
  } finally {
    stopLoad();
    await pool.end();
    await cleanUp();
  }
  const withMeta: Omit<BenchResults, "targets"> = {
    meta: {
      command: [
        ...Object.entries(process.env)
          .filter(([name]) => name.startsWith("BENCH_"))
          .map(([name, value]) => `${name}=${value}`),
        "npm run bench",
      ].join(" "),
      startedAt: new Date(started).toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      node: process.version,
      cpus: cpus().length,
      loadAverageAtStart,
      loadAverageAtEnd: loadavg().map((n) => Math.round(n * 100) / 100),
      settings,
      scenarios,
    },
    ...partial,
  };
  const results: BenchResults = { ...withMeta, targets: evaluateTargets(withMeta) };
  // A partial run (BENCH_ONLY) must not overwrite the last full run's committed results.
  const name = process.env.BENCH_ONLY ? "partial" : "latest";
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, `${name}.json`), JSON.stringify(results, null, 2) + "\n");
  writeFileSync(join(RESULTS, `${name}.md`), renderMarkdown(results));
  const missed = results.targets.filter((t) => !t.met);
  console.log(
    `\nWrote bench/results/${name}.json and ${name}.md in ${results.meta.durationSeconds} s; ${results.targets.length - missed.length}/${results.targets.length} targets met.`,
  );
  for (const t of missed) console.log(`  missed: ${t.target}: ${t.measured}`);
}

process.once("SIGINT", () => {
  console.log("\ninterrupted: dropping this run's tables and Redis keys");
  cleanUp()
    .catch((err) => console.error("clean-up failed:", err))
    .finally(() => process.exit(130));
});

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
