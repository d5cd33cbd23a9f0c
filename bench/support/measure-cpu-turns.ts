// Server CPU per request, one server after another: each server of a group gets N requests in its own turn, the
// order alternating by round (A B C, then C B A). For servers that wait on a shared service (the rate limiter's
// Redis-bound routes): loaded at once with a CPU-bound bare route, the bare route takes the cores and starves Redis,
// and the Redis-bound routes then measure their outage fallback. CPU-bound groups use measure-cpu.ts's windows.
import { settings } from "../config";
import { runLoad } from "../load/run-load";
import { median, round } from "../report/stats";
import { WARMUP_REQUESTS, type CpuGroup, type CpuMeasurement } from "./measure-cpu";
import { processCpuMicros } from "./proc-cpu";
import type { RunningServer } from "./spawn-server";

/** Only bounds how long the parent waits for one turn. */
const RUN_LIMIT_SECONDS = 600;

export async function measureCpuTurns(group: CpuGroup): Promise<CpuMeasurement[]> {
  const { name, servers, mode, runId, requests } = group;
  const rounds = group.rounds ?? settings.rounds;
  const figures = servers.map(() => ({ us: [] as number[], non2xx: 0, errors: 0 }));
  // Replays cycle through keys primed by the warm-up (the same prefix every round); fresh keys get a new prefix per round.
  const job = (index: number, tag: string, amount: number) =>
    runLoad({
      url: (servers[index] as RunningServer).url + "/payments",
      mode,
      keyPrefix: `${runId}-${name}-${index}-${mode}${mode === "replay" ? "" : `-${tag}`}`,
      replayKeys: settings.replayKeys,
      durationSeconds: RUN_LIMIT_SECONDS,
      amount,
      connections: settings.connections,
    });

  for (let i = 0; i < servers.length; i++) await job(i, "warm", WARMUP_REQUESTS);
  for (let r = 0; r < rounds; r++) {
    const order = servers.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    for (const i of order) {
      const server = servers[i] as RunningServer;
      const before = processCpuMicros(server.pid);
      const result = await job(i, `r${r}`, requests);
      // Priming requests (replays of the warm-up's keys) ran in the same process: they count as requests.
      const us = (processCpuMicros(server.pid) - before) / (result.total + result.primed);
      const own = figures[i] as (typeof figures)[number];
      own.us.push(round(us, 1));
      own.non2xx += result.non2xx;
      own.errors += result.errors;
      const flags = result.non2xx || result.errors ? `  non2xx=${result.non2xx} errors=${result.errors}` : "";
      console.log(
        `  [${mode} r${r}] ${server.label.padEnd(40)} ${us.toFixed(1).padStart(7)} us CPU per request${flags}`,
      );
    }
  }
  return servers.map((server, i) => {
    const { us, non2xx, errors } = figures[i] as (typeof figures)[number];
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
