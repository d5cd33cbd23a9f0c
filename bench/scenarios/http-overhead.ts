// Scenarios 1 and 2: each framework's bare route against our block on every store, plus the floor on Express.
import type pg from "pg";
import { LOAD_MODES, type LoadMode } from "../load/load-plan";
import type { Framework } from "../servers/spec";
import { measureGroup, versus, type Measurement, type Ratio } from "../support/alternate";
import { startServerSet, type ServerWish } from "../support/server-set";
import { runId } from "../support/services";

export type OverheadRow = Measurement & {
  framework: Framework;
  route: ServerWish;
  vsBare?: Ratio | undefined;
  vsFloor?: Ratio | undefined;
};

const FRAMEWORKS: Framework[] = ["express", "fastify", "hono"];

function wishes(framework: Framework): ServerWish[] {
  const list: ServerWish[] = [
    { framework, variant: "bare", backend: "none" },
    { framework, variant: "block", backend: "memory", style: "wrapper" },
    { framework, variant: "block", backend: "postgres", style: "wrapper" },
    { framework, variant: "block", backend: "postgres+redis", style: "wrapper" },
  ];
  if (framework === "express") {
    list.push({ framework, variant: "floor", backend: "postgres" });
    // The opt-in `preparedStatements(pool)` client: what it changes against the floor.
    list.push({ framework, variant: "block", backend: "postgres-prepared", style: "wrapper" });
  }
  return list;
}

export async function httpOverhead(pool: pg.Pool): Promise<OverheadRow[]> {
  const rows: OverheadRow[] = [];
  for (const framework of FRAMEWORKS) {
    console.log(`\n${framework}:`);
    const routes = wishes(framework);
    const set = await startServerSet(pool, `oh_${framework}`, routes);
    try {
      for (const mode of Object.keys(LOAD_MODES) as LoadMode[]) {
        const measured = await measureGroup({ name: `oh${framework}`, servers: set.servers, mode, runId });
        const bare = measured[routes.findIndex((route) => route.variant === "bare")];
        const floor = measured[routes.findIndex((route) => route.variant === "floor")];
        measured.forEach((m, i) => {
          const route = routes[i] as ServerWish;
          const comparesToFloor =
            route.variant === "block" && route.backend.startsWith("postgres") && route.backend !== "postgres+redis";
          rows.push({
            ...m,
            framework,
            route,
            vsBare: bare && m !== bare ? versus(m, bare) : undefined,
            vsFloor: floor && comparesToFloor ? versus(m, floor) : undefined,
          });
        });
      }
    } finally {
      await set.stopAll();
    }
  }
  return rows;
}
