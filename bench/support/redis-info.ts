// What the Redis server says of its own work (INFO), for the scenarios that count Redis's CPU beside the app's.
import type { Redis } from "ioredis";

/** A numeric field of an INFO reply (e.g. `used_cpu_user`), 0 when absent. */
function infoField(info: string, name: string): number {
  return Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? 0);
}

/** The server's CPU so far in seconds: user + system, its main thread and its helpers. */
export function cpuSeconds(info: string): number {
  return infoField(info, "used_cpu_sys") + infoField(info, "used_cpu_user");
}

export async function redisCpuSeconds(redis: Redis): Promise<number> {
  return cpuSeconds(await redis.info("cpu"));
}
