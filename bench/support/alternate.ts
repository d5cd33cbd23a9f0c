// Runs a group of servers in alternation (A B C, then C B A, ...) and compares them round by round.
import { settings } from "../config";
import type { LoadMode } from "../load/load-plan";
import { runLoad } from "../load/run-load";
import type { LoadResult } from "../load/load-worker";
import { median, pairedRatio, round } from "../report/stats";
import type { RunningServer } from "./spawn-server";

export type Measurement = {
  label: string;
  mode: LoadMode;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  rounds: LoadResult[];
};

/** Ratios of one measurement to another from the same group, taken round by round. */
export type Ratio = { to: string; requestsPerSecond: number; p50: number; p99: number };

/** `name` makes every Idempotency-Key of the group unique across the whole run. */
export type Group = { name: string; servers: RunningServer[]; mode: LoadMode; runId: string };

export async function measureGroup({ name, servers, mode, runId }: Group): Promise<Measurement[]> {
  const results = new Map<RunningServer, LoadResult[]>(servers.map((server) => [server, []]));
  const job = (server: RunningServer, tag: string, durationSeconds: number) =>
    runLoad({
      url: server.url + "/payments",
      mode,
      keyPrefix: `${runId}-${name}-${servers.indexOf(server)}-${mode}-${tag}`,
      replayKeys: settings.replayKeys,
      durationSeconds,
      connections: settings.connections,
    });

  for (const server of servers) await job(server, "warm", settings.warmupSeconds);
  for (let r = 0; r < settings.rounds; r++) {
    const order = r % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) {
      const result = await job(server, `r${r}`, settings.durationSeconds);
      results.get(server)?.push(result);
      log(server.label, mode, r, result);
    }
  }
  return servers.map((server) => summarise(server, mode, results.get(server) ?? []));
}

const pick = (list: LoadResult[], field: "requestsPerSecond" | "p50Ms" | "p99Ms") =>
  list.map((result) => result[field]);

/** `measurement` against `base` (both from one group): above 1 means more req/s, or slower latency. */
export function versus(measurement: Measurement, base: Measurement): Ratio {
  return {
    to: base.label,
    requestsPerSecond: round(
      pairedRatio(pick(measurement.rounds, "requestsPerSecond"), pick(base.rounds, "requestsPerSecond")),
    ),
    p50: round(pairedRatio(pick(measurement.rounds, "p50Ms"), pick(base.rounds, "p50Ms"))),
    p99: round(pairedRatio(pick(measurement.rounds, "p99Ms"), pick(base.rounds, "p99Ms"))),
  };
}

function summarise(server: RunningServer, mode: LoadMode, rounds: LoadResult[]): Measurement {
  return {
    label: server.label,
    mode,
    requestsPerSecond: round(median(pick(rounds, "requestsPerSecond")), 0),
    p50Ms: round(median(pick(rounds, "p50Ms"))),
    p99Ms: round(median(pick(rounds, "p99Ms"))),
    non2xx: rounds.reduce((sum, result) => sum + result.non2xx, 0),
    errors: rounds.reduce((sum, result) => sum + result.errors, 0),
    rounds,
  };
}

function log(label: string, mode: LoadMode, r: number, result: LoadResult): void {
  const flags = result.non2xx || result.errors ? `  non2xx=${result.non2xx} errors=${result.errors}` : "";
  console.log(
    `  [${mode} r${r}] ${label.padEnd(40)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${result.p50Ms} ms  p99 ${result.p99Ms} ms${flags}`,
  );
}
