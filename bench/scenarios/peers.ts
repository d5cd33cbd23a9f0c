// Scenario 4: express-idempotency and @node-idempotency/core on Express against our block, per store class.
import type pg from "pg";
import { LOAD_MODES, type LoadMode } from "../load/load-plan";
import { measureGroup, versus, type Measurement, type Ratio } from "../support/alternate";
import { startServerSet, type ServerWish } from "../support/server-set";
import { runId } from "../support/services";

/** In-process memory against memory; for Redis the peers keep records in Redis, we in PostgreSQL with a Redis cache. */
export type StoreClass = "memory" | "redis";
export type PeerRow = Measurement & { storeClass: StoreClass; route: ServerWish; vsBlocks?: Ratio };

const CLASSES: Record<StoreClass, ServerWish[]> = {
  memory: [
    { framework: "express", variant: "block", backend: "memory", style: "capture" },
    { framework: "express", variant: "express-idempotency", backend: "memory" },
    { framework: "express", variant: "node-idempotency", backend: "memory" },
  ],
  redis: [
    { framework: "express", variant: "block", backend: "postgres+redis", style: "capture" },
    { framework: "express", variant: "express-idempotency", backend: "redis" },
    { framework: "express", variant: "node-idempotency", backend: "redis" },
  ],
};

export async function peers(pool: pg.Pool): Promise<PeerRow[]> {
  const rows: PeerRow[] = [];
  for (const storeClass of Object.keys(CLASSES) as StoreClass[]) {
    console.log(`\npeers, ${storeClass} class:`);
    const set = await startServerSet(pool, `peer_${storeClass}`, CLASSES[storeClass]);
    try {
      for (const mode of Object.keys(LOAD_MODES) as LoadMode[]) {
        const measured = await measureGroup({ name: `peer${storeClass}`, servers: set.servers, mode, runId });
        const [ours] = measured;
        measured.forEach((m, i) => {
          rows.push({ ...m, storeClass, route: CLASSES[storeClass][i] as ServerWish, vsBlocks: ours && m !== ours ? versus(m, ours) : undefined });
        });
      }
    } finally {
      await set.stopAll();
    }
  }
  return rows;
}
