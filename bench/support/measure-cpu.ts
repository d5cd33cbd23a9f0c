// Server CPU per request, for a group of servers loaded at the same time. After a warm-up (all at once too), each
// round loads every server of the group, each on its own connections from the one load generator process, for one
// window of wall time; then it stops them together and drains them (no connection sends another request, the
// answers in flight are awaited), so the servers are idle when their CPU is read again. A server's CPU per request
// is its process's user + system time over the round, read from /proc (Linux only) to the nanosecond, divided by
// the requests it answered. On a shared host, whatever else runs then hits every server of the group alike: one
// server loaded after another (the earlier method) saw its own figure move 20-40 % between turns, which buried the
// differences of 10-40 µs the targets compare. The window is sized so the server answering the fewest gets about
// `requests`: a same number of requests each would leave the slowest running alone at the end.
import { settings } from "../config";
import type { LoadMode } from "../load/load-plan";
import { loadPid, runLoad, stopLoadJobs } from "../load/run-load";
import type { LoadJob, LoadResult } from "../load/load-worker";
import { median, pairedDifference, round } from "../report/stats";
import { processCpuMicros } from "./proc-cpu";
import type { RunningServer } from "./spawn-server";

/** Unmeasured requests per server before its first round, so the JIT has settled. */
export const WARMUP_REQUESTS = 2_000;
/** Only bounds how long the parent waits for one job. */
const RUN_LIMIT_SECONDS = 600;
/** The unmeasured window after the warm-up that sizes the first round's. */
const PACE_MS = 2_000;
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
/** Settles when the first of `runs` fails (never when none does). */
const firstFailure = (runs: Promise<unknown>[]) =>
  new Promise<void>((resolve) => runs.forEach((run) => run.catch(() => resolve())));

/** Runs `jobs` at once for `windowMs`, then stops and drains them all; the wall time it took. */
async function loadWindow(jobs: LoadJob[], windowMs: number): Promise<{ results: LoadResult[]; ms: number }> {
  const started = performance.now();
  const running = jobs.map((job) => runLoad({ ...job, untilStopped: true }));
  // A job that fails ends the window early; its error comes from the Promise.all below.
  await Promise.race([sleep(windowMs), firstFailure(running)]);
  stopLoadJobs();
  const results = await Promise.all(running);
  return { results, ms: performance.now() - started };
}

export async function measureCpuGroup({
  name,
  servers,
  mode,
  runId,
  requests,
  rounds = settings.rounds,
}: CpuGroup): Promise<CpuMeasurement[]> {
  const figures = servers.map(() => ({ us: [] as number[], answered: [] as number[], non2xx: 0, errors: 0 }));
  // Replays cycle through keys primed by the warm-up (the same prefix every round); fresh keys get a new prefix per round.
  const job = (index: number, tag: string, extra: Partial<LoadJob> = {}): LoadJob => ({
    url: (servers[index] as RunningServer).url + "/payments",
    mode,
    keyPrefix: `${runId}-${name}-${index}-${mode}${mode === "replay" ? "" : `-${tag}`}`,
    replayKeys: settings.replayKeys,
    durationSeconds: RUN_LIMIT_SECONDS,
    connections: settings.connections,
    prime: false,
    ...extra,
  });

  // The warm-up, all at once too, then a short unmeasured window whose slowest pace sizes the first round's
  // (the warm-up's own pace is a third of it: the servers start cold).
  await Promise.all(servers.map((_, i) => runLoad(job(i, "warm", { amount: WARMUP_REQUESTS, prime: true }))));
  const pace = await loadWindow(
    servers.map((_, i) => job(i, "pace")),
    PACE_MS,
  );
  let windowMs = Math.min(
    (requests * pace.ms) / Math.max(1, Math.min(...pace.results.map((result) => result.total))),
    (RUN_LIMIT_SECONDS * 1000) / 2,
  );
  const loadCpu = () => processCpuMicros(loadPid() as number);
  const loadBefore = loadCpu();

  for (let r = 0; r < rounds; r++) {
    // The order the jobs start in alternates, so no server always gets the first milliseconds alone.
    const order = servers.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    const before = servers.map((server) => processCpuMicros(server.pid));
    const window = await loadWindow(
      order.map((i) => job(i, `r${r}`)),
      windowMs,
    );
    const after = servers.map((server) => processCpuMicros(server.pid));
    const results = servers.map((_, i) => window.results[order.indexOf(i)] as LoadResult);
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
    console.log(`  [${mode} r${r}] window ${(window.ms / 1000).toFixed(1)} s`);
    // The next window gives the server that answered the fewest about `requests`.
    const fewest = Math.min(...results.map((result) => result.total + result.primed));
    windowMs *= Math.min(WINDOW_STEP.max, Math.max(WINDOW_STEP.min, requests / Math.max(1, fewest)));
    windowMs = Math.min(windowMs, (RUN_LIMIT_SECONDS * 1000) / 2);
  }
  const sent = figures.reduce((sum, own) => sum + own.answered.reduce((a, b) => a + b, 0), 0);
  console.log(`  [${mode}] load generator: ${((loadCpu() - loadBefore) / sent).toFixed(1)} us CPU per request`);
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
