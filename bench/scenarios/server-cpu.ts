// Scenario 3: server CPU per request of every framework adapter (MemoryStore), both styles, fresh keys and replays,
// next to the framework's bare route, and @node-idempotency on Express.
import type pg from "pg";
import { settings } from "../config";
import type { LoadMode } from "../load/load-plan";
import type { Framework, Style } from "../servers/spec";
import { addedUs, measureCpuGroup, type CpuMeasurement } from "../support/measure-cpu";
import { measureCpuTurns } from "../support/measure-cpu-turns";
import { startServerSet, type ServerWish } from "../support/server-set";
import { runId } from "../support/services";

/** `group`: the servers measured together (the bare route of the group is the base of `addedUs`). */
export type CpuRow = CpuMeasurement & {
  framework: Framework;
  route: ServerWish;
  group?: string | undefined;
  addedUs?: number | undefined;
};

const MODES: LoadMode[] = ["fresh", "replay"];

function wishes(framework: Framework): ServerWish[] {
  const block = (style: Style): ServerWish => ({ framework, variant: "block", backend: "memory", style });
  const list: ServerWish[] = [{ framework, variant: "bare", backend: "none" }, block("wrapper")];
  // NestJS has one style (@Idempotent() with its interceptor); what any interceptor costs is measured beside it.
  if (framework.startsWith("nestjs")) list.push({ framework, variant: "noop-interceptor", backend: "none" });
  else list.push(block("capture"));
  if (framework === "express") list.push({ framework, variant: "node-idempotency", backend: "memory" });
  return list;
}

export const CPU_FRAMEWORKS: Framework[] = ["express", "fastify", "hono", "koa", "nestjs", "nestjs-fastify", "fetch"];

/**
 * Requests per server and round, and rounds, when a group needs other than BENCH_CPU_REQUESTS / BENCH_ROUNDS;
 * `oneAtATime`: servers that wait on a shared service are loaded in turns (measure-cpu-turns.ts), not together.
 */
export type CpuTurns = { requests?: number | undefined; rounds?: number | undefined; oneAtATime?: boolean };

/** Measures each group of servers (all loaded at once, per round), rows compared with the group's first (bare) server. */
export async function cpuRows(
  pool: pg.Pool,
  group: string,
  framework: Framework,
  routes: ServerWish[],
  modes: LoadMode[],
  turns: CpuTurns = {},
): Promise<CpuRow[]> {
  const rows: CpuRow[] = [];
  const set = await startServerSet(pool, group, routes);
  try {
    for (const mode of modes) {
      const oneAtATime = turns.oneAtATime || settings.cpuMethod === "turns";
      const measure = oneAtATime ? measureCpuTurns : measureCpuGroup;
      const measured = await measure({
        name: group,
        servers: set.servers,
        mode,
        runId,
        requests: turns.requests ?? settings.cpuRequests,
        rounds: turns.rounds,
      });
      const bare = measured[0];
      measured.forEach((m, i) =>
        rows.push({
          ...m,
          framework,
          route: routes[i] as ServerWish,
          group,
          addedUs: bare && m !== bare ? addedUs(m, bare) : undefined,
        }),
      );
    }
  } finally {
    await set.stopAll();
  }
  return rows;
}

/** BENCH_CPU_FRAMEWORKS=fetch,nestjs measures only those (a short run of the rows a change needs). */
function selectedFrameworks(): Framework[] {
  const only = process.env.BENCH_CPU_FRAMEWORKS?.split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  if (!only?.length) return CPU_FRAMEWORKS;
  const unknown = only.filter((name) => !(CPU_FRAMEWORKS as string[]).includes(name));
  if (unknown.length)
    throw new Error(`BENCH_CPU_FRAMEWORKS: unknown ${unknown.join(", ")}; known: ${CPU_FRAMEWORKS.join(", ")}.`);
  return CPU_FRAMEWORKS.filter((name) => only.includes(name));
}

export async function serverCpu(pool: pg.Pool): Promise<CpuRow[]> {
  const rows: CpuRow[] = [];
  for (const framework of selectedFrameworks()) {
    console.log(`\n${framework}:`);
    rows.push(...(await cpuRows(pool, `cpu_${framework.replace("-", "_")}`, framework, wishes(framework), MODES)));
  }
  return rows;
}
