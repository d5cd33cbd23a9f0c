// Server CPU per request, for a group of servers loaded at the same time. Each server has its own load generator
// process; a round starts them together, lets them run for one window of wall time, then stops them together, and
// each generator drains (sends nothing new and waits for the answers in flight). Each server's CPU per request is
// its process's user + system time over the round, read from /proc (Linux only) to the nanosecond while it is idle
// before and after, divided by the requests it answered. On a shared host, whatever else runs then hits every
// server of the group alike, so the differences between them (and `addedUs`, paired by round) hold far better than
// with one server loaded after another: there a server's own figure moved 20-40 % between turns.
import { settings } from "../config";
import type { LoadMode } from "../load/load-plan";
import { loadGenerators, type LoadGenerator } from "../load/run-load";
import type { LoadJob, LoadResult } from "../load/load-worker";
import { median, pairedDifference, round } from "../report/stats";
import { processCpuMicros } from "./proc-cpu";
import type { RunningServer } from "./spawn-server";

/** Unmeasured requests per server before its first round, so the JIT has settled. */
export const WARMUP_REQUESTS = 2_000;
/** Only bounds how long the parent waits for one job. */
const RUN_LIMIT_SECONDS = 600;
/** How far one round's window may grow or shrink from the last (its requests against the wanted number). */
const WINDOW_STEP = { min: 0.5, max: 2 };

export type CpuMeasurement = {
  label: string;
  mode: LoadMode;
  /** Median over rounds of the server's CPU µs per request. */
  usPerRequest: number;
  roundsUs: number[];
  /** The fewest requests this server answered in a round. */
  requestsPerRound: number;
  non2xx: number;
  errors: number;
};

/** `requests`: about what the server answering the fewest gets per round; `rounds`: default BENCH_ROUNDS. */
export type CpuGroup = {
  name: string;
  servers: RunningServer[];
  mode: LoadMode;
  runId: string;
  requests: number;
  rounds?: number | undefined;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `jobs` on their generators at once for `windowMs`, then stops and drains them all. */
async function loadWindow(generators: LoadGenerator[], jobs: LoadJob[], windowMs: number): Promise<LoadResult[]> {
  const running = jobs.map((job, i) => (generators[i] as LoadGenerator).run(job));
  // A job that fails ends the window early; its error comes from the Promise.all below.
  await Promise.race([
    sleep(windowMs),
    Promise.any(
      running.map((run) =>
        run.then(
          () => never,
          () => undefined,
        ),
      ),
    ),
  ]);
  for (const generator of generators) generator.stop();
  return Promise.all(running);
}
const never = new Promise<never>(() => {});

export async function measureCpuGroup({
  name,
  servers,
  mode,
  runId,
  requests,
  rounds = settings.rounds,
}: CpuGroup): Promise<CpuMeasurement[]> {
  const generators = loadGenerators(servers.length);
  const figures = servers.map(() => ({ us: [] as number[], answered: [] as number[], non2xx: 0, errors: 0 }));
  // Replays cycle through keys primed by the warm-up (the same prefix every round); fresh keys get a new prefix per round.
  const job = (index: number, tag: string, extra: Partial<LoadJob>): LoadJob => ({
    url: (servers[index] as RunningServer).url + "/payments",
    mode,
    keyPrefix: `${runId}-${name}-${index}-${mode}${mode === "replay" ? "" : `-${tag}`}`,
    replayKeys: settings.replayKeys,
    durationSeconds: RUN_LIMIT_SECONDS,
    connections: settings.connections,
    ...extra,
  });

  // The warm-up, all at once too, in two halves: the slowest server's pace in the second (the first runs cold, at
  // a third of it) sizes the first window.
  const warmUp = (half: number) =>
    Promise.all(
      generators.map((generator, i) =>
        generator.run(job(i, `warm${half}`, { amount: WARMUP_REQUESTS / 2, prime: half === 0 })),
      ),
    );
  await warmUp(0);
  const warm = await warmUp(1);
  let windowMs = (1000 * requests) / Math.min(...warm.map((result) => result.requestsPerSecond));
  const loadCpu = () =>
    generators.reduce((sum, generator) => sum + (generator.pid() ? processCpuMicros(generator.pid() as number) : 0), 0);
  const loadBefore = loadCpu();

  for (let r = 0; r < rounds; r++) {
    // The order the generators start in alternates, so no server always gets the first milliseconds alone.
    const order = servers.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    const jobs = order.map((i) => job(i, `r${r}`, { untilStopped: true, prime: false }));
    const before = servers.map((server) => processCpuMicros(server.pid));
    const started = performance.now();
    const byOrder = await loadWindow(
      order.map((i) => generators[i] as LoadGenerator),
      jobs,
      windowMs,
    );
    const after = servers.map((server) => processCpuMicros(server.pid));
    const elapsed = performance.now() - started;
    const results: LoadResult[] = [];
    order.forEach((i, k) => (results[i] = byOrder[k] as LoadResult));
    servers.forEach((server, i) => {
      const result = results[i] as LoadResult;
      const answered = result.total + result.primed;
      const us = ((after[i] as number) - (before[i] as number)) / answered;
      const own = figures[i] as (typeof figures)[number];
      own.us.push(round(us, 1));
      own.answered.push(answered);
      own.non2xx += result.non2xx;
      own.errors += result.errors;
      const flags = result.non2xx || result.errors ? `  non2xx=${result.non2xx} errors=${result.errors}` : "";
      console.log(
        `  [${mode} r${r}] ${server.label.padEnd(40)} ${us.toFixed(1).padStart(7)} us CPU per request over ${answered}${flags}`,
      );
    });
    console.log(`  [${mode} r${r}] window ${(elapsed / 1000).toFixed(1)} s`);
    // The next window gives the server that answered the fewest about `requests`.
    const fewest = Math.min(...results.map((result) => result.total + result.primed));
    windowMs *= Math.min(WINDOW_STEP.max, Math.max(WINDOW_STEP.min, requests / Math.max(1, fewest)));
  }
  const sent = figures.reduce((sum, own) => sum + own.answered.reduce((a, b) => a + b, 0), 0);
  console.log(`  [${mode}] load generators: ${((loadCpu() - loadBefore) / sent).toFixed(1)} us CPU per request`);
  return servers.map((server, i) => {
    const { us, answered, non2xx, errors } = figures[i] as (typeof figures)[number];
    return {
      label: server.label,
      mode,
      usPerRequest: round(median(us), 1),
      roundsUs: us,
      requestsPerRound: Math.min(...answered),
      non2xx,
      errors,
    };
  });
}

/** CPU µs per request `measurement` adds to `base` (same group), taken round by round. */
export function addedUs(measurement: CpuMeasurement, base: CpuMeasurement): number {
  return round(pairedDifference(measurement.roundsUs, base.roundsUs), 1);
}
