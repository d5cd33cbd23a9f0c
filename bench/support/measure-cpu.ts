// Server CPU per request: each server of a group gets N requests in alternation (A B C, then C B A, ...),
// and its process's user + system time over them is read from /proc (Linux only), to the nanosecond.
import { settings } from "../config";
import type { LoadMode } from "../load/load-plan";
import { runLoad } from "../load/run-load";
import { median, pairedDifference, round } from "../report/stats";
import { processCpuMicros } from "./proc-cpu";
import type { RunningServer } from "./spawn-server";

/** Unmeasured requests per server before its first round, so the JIT has settled. */
export const WARMUP_REQUESTS = 2_000;
/** Only bounds how long the parent waits for one run of N requests. */
const RUN_LIMIT_SECONDS = 600;

export type CpuMeasurement = {
  label: string;
  mode: LoadMode;
  /** Median over rounds of the server's CPU µs per request. */
  usPerRequest: number;
  roundsUs: number[];
  requestsPerRound: number;
  non2xx: number;
  errors: number;
};

/** `rounds`: alternating rounds (default BENCH_ROUNDS). */
export type CpuGroup = {
  name: string;
  servers: RunningServer[];
  mode: LoadMode;
  runId: string;
  requests: number;
  rounds?: number | undefined;
};

export async function measureCpuGroup({
  name,
  servers,
  mode,
  runId,
  requests,
  rounds = settings.rounds,
}: CpuGroup): Promise<CpuMeasurement[]> {
  const perServer = new Map<RunningServer, { us: number[]; non2xx: number; errors: number }>(
    servers.map((s) => [s, { us: [], non2xx: 0, errors: 0 }]),
  );
  // Replays cycle through keys primed by the warm-up (the same prefix every round); fresh keys get a new prefix per round.
  const prefix = (server: RunningServer, tag: string) =>
    `${runId}-${name}-${servers.indexOf(server)}-${mode}${mode === "replay" ? "" : `-${tag}`}`;
  const job = (server: RunningServer, tag: string, amount: number) =>
    runLoad({
      url: server.url + "/payments",
      mode,
      keyPrefix: prefix(server, tag),
      replayKeys: settings.replayKeys,
      durationSeconds: RUN_LIMIT_SECONDS,
      amount,
      connections: settings.connections,
    });

  for (const server of servers) await job(server, "warm", WARMUP_REQUESTS);
  for (let r = 0; r < rounds; r++) {
    for (const server of r % 2 === 0 ? servers : [...servers].reverse()) {
      const before = processCpuMicros(server.pid);
      const result = await job(server, `r${r}`, requests);
      // Priming requests (replays of the warm-up's keys) ran in the same process: they count as requests.
      const us = (processCpuMicros(server.pid) - before) / (result.total + result.primed);
      const figures = perServer.get(server)!;
      figures.us.push(round(us, 1));
      figures.non2xx += result.non2xx;
      figures.errors += result.errors;
      const flags = result.non2xx || result.errors ? `  non2xx=${result.non2xx} errors=${result.errors}` : "";
      console.log(
        `  [${mode} r${r}] ${server.label.padEnd(40)} ${us.toFixed(1).padStart(7)} us CPU per request${flags}`,
      );
    }
  }
  return servers.map((server) => {
    const { us, non2xx, errors } = perServer.get(server)!;
    return {
      label: server.label,
      mode,
      usPerRequest: round(median(us), 1),
      roundsUs: us,
      requestsPerRound: requests,
      non2xx,
      errors,
    };
  });
}

/** CPU µs per request `measurement` adds to `base` (same group), taken round by round. */
export function addedUs(measurement: CpuMeasurement, base: CpuMeasurement): number {
  return round(pairedDifference(measurement.roundsUs, base.roundsUs), 1);
}
