// Scenario 5: express-idempotency and @node-idempotency/core on Express against our block, per store class.
import type pg from "pg";
import { LOAD_MODES, type LoadMode } from "../load/load-plan";
import { measureGroup, versus, type Measurement, type Ratio } from "../support/alternate";
import { startServerSet, type ServerWish } from "../support/server-set";
import { runId } from "../support/services";

/**
 * In-process memory against memory; for `redis` the peers keep records in Redis, we in PostgreSQL with a
 * Redis cache; for `redis-store` (the scale-out scenario) we keep them in Redis too, with our RedisStore
 * on ioredis, and for `redis-store-node-redis` on a node-redis client (the client @node-idempotency uses).
 */
export type StoreClass = "memory" | "redis" | "redis-store" | "redis-store-node-redis";
export type PeerRow = Measurement & {
  storeClass: StoreClass;
  route: ServerWish;
  comparedWith?: string | undefined;
  vsBlocks?: Ratio | undefined;
};

/**
 * Each peer is measured against our route of the same shape: express-idempotency is a middleware
 * that records what the route sends (our capture style); @node-idempotency/core is called around
 * the route's logic, as its NestJS interceptor does (our `idempotent()` wrapper).
 */
const SAME_SHAPE: Partial<Record<ServerWish["variant"], "capture" | "wrapper">> = {
  "express-idempotency": "capture",
  "node-idempotency": "wrapper",
};

function classServers(ours: ServerWish["backend"], theirs: ServerWish["backend"]): ServerWish[] {
  return [
    { framework: "express", variant: "block", backend: ours, style: "capture" },
    { framework: "express", variant: "block", backend: ours, style: "wrapper" },
    { framework: "express", variant: "express-idempotency", backend: theirs },
    { framework: "express", variant: "node-idempotency", backend: theirs },
  ];
}

const CLASSES: Record<StoreClass, ServerWish[]> = {
  memory: classServers("memory", "memory"),
  redis: classServers("postgres+redis", "redis"),
  "redis-store": classServers("redis-store", "redis"),
  "redis-store-node-redis": classServers("redis-store-node-redis", "redis"),
};

export async function peers(pool: pg.Pool): Promise<PeerRow[]> {
  const rows: PeerRow[] = [];
  for (const storeClass of ["memory", "redis"] as const)
    rows.push(...(await peerClass(pool, storeClass, Object.keys(LOAD_MODES) as LoadMode[])));
  return rows;
}

/** Our two styles and the two peers on one store class, each peer compared with our route of its shape. */
export async function peerClass(pool: pg.Pool, storeClass: StoreClass, modes: LoadMode[]): Promise<PeerRow[]> {
  const rows: PeerRow[] = [];
  console.log(`\npeers, ${storeClass} class:`);
  const routes = CLASSES[storeClass];
  const group = storeClass.replaceAll("-", "");
  const set = await startServerSet(pool, `peer_${group}`, routes);
  try {
    for (const mode of modes) {
      const measured = await measureGroup({ name: `peer${group}`, servers: set.servers, mode, runId });
      measured.forEach((m, i) => {
        const route = routes[i] as ServerWish;
        const style = SAME_SHAPE[route.variant];
        const oursIndex = routes.findIndex((r) => r.variant === "block" && r.style === style);
        const ours = style ? measured[oursIndex] : undefined;
        rows.push({ ...m, storeClass, route, comparedWith: ours?.label, vsBlocks: ours ? versus(m, ours) : undefined });
      });
    }
  } finally {
    await set.stopAll();
  }
  return rows;
}
