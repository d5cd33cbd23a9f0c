// Reads an HTTP worker's GET /_stats: the block's counters and the heap.
import { send } from "./http-client";
import type { WorkerProcess } from "./processes";

export type WorkerStats = { counters: Record<string, number>; heapUsed: number };

/** `collect`: run a full GC first, so heap figures compare live objects only. */
export async function statsOf(worker: WorkerProcess, collect = false): Promise<WorkerStats> {
  const answer = await send({ port: worker.port, method: "GET", path: `/_stats${collect ? "?gc=1" : ""}` });
  if (answer.status !== 200) throw new Error(`GET /_stats answered ${answer.status}`);
  return JSON.parse(answer.text) as WorkerStats;
}

export function counter(stats: WorkerStats, name: string): number {
  return stats.counters[name] ?? 0;
}
