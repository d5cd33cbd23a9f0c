// Scale-out stores: round trips per request of RedisStore (standalone, Cluster) and DynamoDbStore, and
// RedisStore's req/s on Express against the peers' Redis storages.
//
//   npx tsx bench/scenarios/scale-out-stores.ts            (round trips, then req/s; needs REDIS_URL, DATABASE_URL)
//   SCALE_OUT_ONLY=round-trips|cpu|peers npx tsx bench/scenarios/scale-out-stores.ts
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";
import { Cluster, Redis } from "ioredis";
import { IdempotencyHandler, type ExecuteContext } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/stores/memory-store";
import { RedisStore } from "@/blocks/idempotency/stores/redis-store";
import type { IdempotencyStore } from "@/blocks/idempotency/types";
import { freshDynamoDbStore, startLocalDynamoDb } from "../../test/idempotency/support/dynamodb-store-harness";
import { startRedisCluster } from "../../test/idempotency/support/redis-cluster";
import { LOAD_MODES, type LoadMode } from "../load/load-plan";
import { measureGroup, versus, type Measurement } from "../support/alternate";
import { startServerSet, type ServerWish } from "../support/server-set";
import { deleteRunKeys, dropRunTables, openPool, openRedis, runId } from "../support/services";
import { assertLoopback, settings } from "../config";

export type ScaleOutTrips = { store: string; firstRequest: number; replay: number; conflict: number };

/** Counts what reaches the server: every ioredis command (Cluster: on each node's connection), every DynamoDB call. */
function countingRedis(redis: Redis, count: () => void): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (...args: Parameters<Redis["sendCommand"]>) => {
    count();
    return send(...args);
  };
}

async function tripsOf(name: string, store: IdempotencyStore, counter: { n: number }): Promise<ScaleOutTrips> {
  const handler = new IdempotencyHandler(store);
  const context = (key: string, amount = 1000): ExecuteContext => ({
    operation: "POST /payments",
    userId: "u_bench",
    key: `${runId}-${key}`,
    payload: { amount, currency: "EUR" },
  });
  const charge = () => ({ id: "pay_1", status: "captured" });
  // Warm up: ioredis loads each script on its first call (EVALSHA answers NOSCRIPT once, then EVAL).
  await handler.execute(context("warm"), charge);
  await handler.execute(context("warm"), charge);
  const measure = async (run: () => Promise<unknown>) => {
    counter.n = 0;
    await run().catch(() => undefined);
    return counter.n;
  };
  const trips = {
    store: name,
    firstRequest: await measure(() => handler.execute(context("a"), charge)),
    replay: await measure(() => handler.execute(context("a"), charge)),
    conflict: await measure(() => handler.execute(context("a", 7), charge)),
  };
  console.log(`  ${name.padEnd(40)} first request ${trips.firstRequest}  replay ${trips.replay}  conflict ${trips.conflict}`);
  return trips;
}

export async function scaleOutRoundTrips(): Promise<ScaleOutTrips[]> {
  const rows: ScaleOutTrips[] = [];
  const counter = { n: 0 };
  const count = () => void counter.n++;

  const redis = new Redis(assertLoopback(settings.redisUrl), { maxRetriesPerRequest: 1 });
  countingRedis(redis, count);
  rows.push(await tripsOf("RedisStore (standalone)", new RedisStore(redis, { keyPrefix: `bench:${runId}:trips:` }), counter));
  redis.disconnect();

  const cluster = await startRedisCluster();
  const client = new Cluster(cluster.ports.map((port) => ({ host: "127.0.0.1", port })), { redisOptions: { maxRetriesPerRequest: 1 } });
  try {
    await new Promise((resolve) => client.once("ready", resolve));
    for (const node of client.nodes("all")) countingRedis(node, count);
    rows.push(await tripsOf("RedisStore (Redis Cluster, 3 masters)", new RedisStore(client), counter));
  } finally {
    client.disconnect();
    await cluster.stop();
  }

  const local = await startLocalDynamoDb();
  try {
    local.client.middlewareStack.add((next) => async (args) => (count(), next(args)), { step: "finalizeRequest", name: "countCalls" });
    const { store } = await freshDynamoDbStore(local.client);
    rows.push(await tripsOf("DynamoDbStore (dynalite)", store, counter));
  } finally {
    await local.close();
  }
  return rows;
}

/**
 * This process's CPU per first request (create + complete), the store called alone and through the
 * handler, 16 at a time: less sensitive to a loaded machine than req/s, and it shows where time goes.
 */
export async function scaleOutClientCpu(requests = 5_000): Promise<Array<{ name: string; cpuMicros: number }>> {
  const redis = new Redis(assertLoopback(settings.redisUrl), { maxRetriesPerRequest: 1 });
  const rows: Array<{ name: string; cpuMicros: number }> = [];
  const measure = async (name: string, run: (key: string) => Promise<unknown>) => {
    for (let i = 0; i < 500; i++) await run(`${runId}-cpu-${rows.length}-warm-${i}`);
    const before = process.cpuUsage();
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < requests) await run(`${runId}-cpu-${rows.length}-${next++}`);
    }));
    const used = process.cpuUsage(before);
    rows.push({ name, cpuMicros: Math.round((used.user + used.system) / requests) });
    console.log(`  ${name.padEnd(40)} ${rows.at(-1)?.cpuMicros} us CPU per first request (client side)`);
  };
  try {
    for (const [name, store] of [["MemoryStore", new MemoryStore()], ["RedisStore", new RedisStore(redis, { keyPrefix: `bench:${runId}:cpu:` })]] as const) {
      await measure(`${name} alone`, async (key) => {
        const scope = { operation: "POST /payments", userId: "u_bench", key };
        const token = randomUUID();
        await store.create({ scope, requestHash: "h", ttlMs: 60_000, token });
        await store.markSuccess(scope, token, '{"id":"pay_1"}', 60_000);
      });
      const handler = new IdempotencyHandler(store);
      await measure(`IdempotencyHandler + ${name}`, (key) =>
        handler.execute({ operation: "POST /payments", userId: "u_bench", key, payload: { amount: 1000, currency: "EUR" } }, () => ({ id: "pay_1" })),
      );
    }
  } finally {
    redis.disconnect();
  }
  return rows;
}

/** RedisStore on Express (both styles) and the two peers on their Redis storages, in alternation. */
export async function scaleOutPeers(): Promise<Array<Measurement & { vsBlocks?: ReturnType<typeof versus> | undefined }>> {
  const routes: ServerWish[] = [
    { framework: "express", variant: "block", backend: "redis-store", style: "capture" },
    { framework: "express", variant: "block", backend: "redis-store", style: "wrapper" },
    { framework: "express", variant: "express-idempotency", backend: "redis" },
    { framework: "express", variant: "node-idempotency", backend: "redis" },
  ];
  const pool = openPool();
  const set = await startServerSet(pool, "scaleout", routes);
  const rows: Array<Measurement & { vsBlocks?: ReturnType<typeof versus> | undefined }> = [];
  try {
    for (const mode of ["fresh", "replay"] as LoadMode[]) {
      console.log(`\nRedisStore vs peers on Express, ${LOAD_MODES[mode]}:`);
      const measured = await measureGroup({ name: "scaleout", servers: set.servers, mode, runId });
      // express-idempotency is compared with our capture style, @node-idempotency with our wrapper (same shapes).
      measured.forEach((m, i) => rows.push({ ...m, vsBlocks: i === 2 ? versus(m, measured[0] as Measurement) : i === 3 ? versus(m, measured[1] as Measurement) : undefined }));
    }
  } finally {
    await set.stopAll();
    await dropRunTables(pool);
    await pool.end();
  }
  return rows;
}

async function main(): Promise<void> {
  const only = process.env.SCALE_OUT_ONLY;
  const redis = openRedis();
  try {
    if (!only || only === "round-trips") {
      console.log("round trips per request (commands / API calls that reach the store):");
      await scaleOutRoundTrips();
    }
    if (!only || only === "cpu") {
      console.log("\nclient CPU per first request:");
      await scaleOutClientCpu();
    }
    if (!only || only === "peers") {
      for (const row of await scaleOutPeers()) {
        const ratio = row.vsBlocks ? `  peer/ours ${row.vsBlocks.requestsPerSecond}x req/s vs ${row.vsBlocks.to}` : "";
        console.log(`  ${row.mode.padEnd(6)} ${row.label.padEnd(44)} ${String(row.requestsPerSecond).padStart(6)} req/s  p50 ${row.p50Ms} ms  p99 ${row.p99Ms} ms${ratio}`);
      }
    }
  } finally {
    await deleteRunKeys(redis);
    redis.disconnect();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
