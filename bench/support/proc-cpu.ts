// CPU seconds used by a process, and by every PostgreSQL backend, read from /proc (Linux only).
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

/** User + system CPU seconds of one process so far. */
export function processCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/**
 * CPU µs of one process so far (user + system), to the nanosecond: the run time of each of its
 * threads, from /proc/<pid>/task/<tid>/schedstat. /proc/<pid>/stat counts in ticks of 10 ms, a
 * tenth of the CPU a turn of a few thousand requests takes on a fast route; a thread that has ended
 * is not counted (a server's threads live as long as it does). Where the kernel keeps no schedstat,
 * the ticks.
 */
export function processCpuMicros(pid: number): number {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch (err) {
        // The thread ended between the listing and the read.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT" && (err as NodeJS.ErrnoException).code !== "ESRCH")
          throw err;
      }
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    return processCpuSeconds(pid) * 1e6;
  }
  return Number.isFinite(ns) && ns > 0 ? ns / 1000 : processCpuSeconds(pid) * 1e6;
}

/** CPU seconds of each live `postgres` process, by pid. */
export function postgresCpu(): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/stat`, "utf8").includes("(postgres)"))
        cpu.set(Number(entry), processCpuSeconds(Number(entry)));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return cpu;
}

/** CPU PostgreSQL spent between two snapshots (backends that ended in between are not counted). */
export function postgresCpuSince(before: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, now] of postgresCpu()) seconds += now - (before.get(pid) ?? 0);
  return seconds;
}
