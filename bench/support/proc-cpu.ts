// CPU seconds used by a process, and by every PostgreSQL backend, read from /proc (Linux only).
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

/** User + system CPU seconds of one process so far. */
export function processCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
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
