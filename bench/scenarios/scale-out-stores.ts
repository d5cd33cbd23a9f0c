// Scenario 8: scale-out stores (issue 18): round trips per request of RedisStore (standalone, a local 3-master Redis
// Cluster) and DynamoDbStore (dynalite, in process), counted, not timed; and RedisStore's req/s on Express
// against the peers' Redis storages.
import { Cluster, Redis } from "ioredis";
import type pg from "pg";
import { IdempotencyHandler, type ExecuteContext } from "@/blocks/idempotency/handler";
import { CREATE, MARK } from "@/blocks/idempotency/stores/redis-store-scripts";
import { RedisStore } from "@/blocks/idempotency/stores/redis-store";
import type { IdempotencyStore } from "@/blocks/idempotency/types";
import { freshDynamoDbStore, startLocalDynamoDb } from "../../test/idempotency/support/dynamodb-store-harness";
import { startRedisCluster } from "../../test/idempotency/support/redis-cluster";
import { assertLoopback, settings } from "../config";
import { runId, startForRun } from "../support/services";
import { peerClass, type PeerRow } from "./peers";

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
  console.log(
    `  ${name.padEnd(40)} first request ${trips.firstRequest}  replay ${trips.replay}  conflict ${trips.conflict}`,
  );
  return trips;
}

export async function scaleOutRoundTrips(): Promise<ScaleOutTrips[]> {
  const rows: ScaleOutTrips[] = [];
  const counter = { n: 0 };
  const count = () => void counter.n++;

  const redis = new Redis(assertLoopback(settings.redisUrl), { maxRetriesPerRequest: 1 });
  countingRedis(redis, count);
  rows.push(
    await tripsOf("RedisStore (standalone)", new RedisStore(redis, { keyPrefix: `bench:${runId}:trips:` }), counter),
  );
  redis.disconnect();

  const { value: cluster, stop: stopCluster } = await startForRun(startRedisCluster(), (started) => started.stop());
  const client = new Cluster(
    cluster.ports.map((port) => ({ host: "127.0.0.1", port })),
    { redisOptions: { maxRetriesPerRequest: 1 } },
  );
  try {
    await new Promise((resolve) => client.once("ready", resolve));
    // ioredis connects to each master lazily, on the first command for one of its slots: that command waits
    // in the node's offline queue while the handshake runs (CLIENT SETINFO twice, INFO for the ready check),
    // then is sent again from the queue. Counted, a first request whose key lands on a master not used yet
    // showed 6 (2 + 3 handshake commands + the queued create counted twice), depending on where the run's
    // random key hashed. Connecting every master before counting makes the count the store's own: 2 / 1.
    await Promise.all(client.nodes("master").map((node) => node.ping()));
    // Each master caches scripts of its own: the warm-up's key loads them on one master only, and a key
    // landing on another paid EVALSHA + EVAL (NOSCRIPT) once per script, counted as 4. Loaded everywhere
    // first, as a long-running process has them, the count is the store's own.
    await Promise.all(client.nodes("master").flatMap((node) => [CREATE, MARK].map((lua) => node.script("LOAD", lua))));
    for (const node of client.nodes("all")) countingRedis(node, count);
    rows.push(await tripsOf("RedisStore (Redis Cluster, 3 masters)", new RedisStore(client), counter));
  } finally {
    client.disconnect();
    await stopCluster();
  }

  const { value: local, stop: stopDynalite } = await startForRun(startLocalDynamoDb(), (started) => started.close());
  try {
    local.client.middlewareStack.add((next) => async (args) => (count(), next(args)), {
      step: "finalizeRequest",
      name: "countCalls",
    });
    const { store } = await freshDynamoDbStore(local.client);
    // DynamoDB hands the existing item back with a failed conditional put (ReturnValuesOnConditionCheckFailure),
    // so a replay is one call there; dynalite ignores that parameter, and the store reads the item back.
    rows.push(
      await tripsOf(
        "DynamoDbStore (dynalite: no item returned with a failed condition, so a replay reads it back)",
        store,
        counter,
      ),
    );
  } finally {
    await stopDynalite();
  }
  return rows;
}

export type ScaleOutResult = { roundTrips: ScaleOutTrips[]; peers: PeerRow[] };

/**
 * Round trips (counted), then RedisStore on Express against the peers' Redis storages, fresh keys and
 * replays: on ioredis (the default), then on node-redis.
 */
export async function scaleOut(pool: pg.Pool): Promise<ScaleOutResult> {
  console.log("round trips per request (commands / API calls that reach the store):");
  const roundTrips = await scaleOutRoundTrips();
  const peers = await peerClass(pool, "redis-store", ["fresh", "replay"]);
  peers.push(...(await peerClass(pool, "redis-store-node-redis", ["fresh", "replay"])));
  return { roundTrips, peers };
}
