// RedisStore for the shared suites: on REDIS_URL, and on a local three-master Redis Cluster started for the file.
import { randomUUID } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { createClient, createCluster } from "redis";
import type { RedisStoreClient } from "@/blocks/idempotency/stores/redis-client";
import { RedisStore } from "@/blocks/idempotency/stores/redis-store";
import { redisUrl } from "./services";
import { startRedisCluster } from "./redis-cluster";
import type { StoreHarness, StoreKind } from "./store-harness";

/**
 * Redis's clock cannot move, so the harness moves the data instead, key by key in one script:
 * every stored timestamp (of a record in either layout) and index score `ms` earlier, every TTL
 * `ms` shorter (deleted at zero), exactly what `ms` of waiting would do.
 */
const AGE_KEY = `
local ms = tonumber(ARGV[1])
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'string' and string.find(KEYS[1], '}:r:', 1, true) then
  local v = redis.call('GET', KEYS[1])
  local head = string.format('%016d%016d', tonumber(string.sub(v, 2, 17)) - ms, tonumber(string.sub(v, 18, 33)) - ms)
  redis.call('SET', KEYS[1], string.sub(v, 1, 1) .. head .. string.sub(v, 34), 'KEEPTTL')
elseif kind == 'hash' and redis.call('HEXISTS', KEYS[1], 'expiresAt') == 1 then
  redis.call('HINCRBY', KEYS[1], 'updatedAt', -ms)
  redis.call('HINCRBY', KEYS[1], 'expiresAt', -ms)
elseif kind == 'zset' then
  local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  for i = 1, #all, 2 do redis.call('ZADD', KEYS[1], tonumber(all[i + 1]) - ms, all[i]) end
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  if ttl <= ms then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ttl - ms) end
end
return 1`;

type Client = Redis | Cluster;

/**
 * A store under its own key prefix, so tests (and other users of the shared Redis) never see each other's keys.
 * `client` (ioredis) ages and deletes the keys; the store runs on `storeClient` when given (node-redis).
 */
export function freshRedisStore(
  client: Client,
  buckets = 16,
  storeClient: RedisStoreClient = client,
): StoreHarness & { store: RedisStore; prefix: string } {
  const prefix = `test:idem:${randomUUID().slice(0, 8)}:`;
  // Few buckets: the suites create a handful of keys, and recovery reads every bucket.
  const store = new RedisStore(storeClient, { keyPrefix: prefix, buckets });
  const eachKey = async (apply: (key: string) => Promise<unknown>) => {
    const nodes = client instanceof Cluster ? client.nodes("master") : [client];
    for (const node of nodes) {
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
        cursor = next;
        for (const key of keys) await apply(key);
      } while (cursor !== "0");
    }
  };
  return {
    store,
    prefix,
    advanceTime: (ms) => eachKey((key) => client.eval(AGE_KEY, 1, key, Math.round(ms))),
    close: () => eachKey((key) => client.del(key)),
  };
}

/** An ioredis client of the machine's Redis, connected. */
async function connectStandalone(): Promise<Redis> {
  const redis = new Redis(redisUrl as string, { maxRetriesPerRequest: 1, lazyConnect: true });
  await redis.connect();
  return redis;
}

/** An ioredis client of a local cluster, once it is ready. */
async function connectCluster(ports: number[]): Promise<Cluster> {
  const client = new Cluster(
    ports.map((port) => ({ host: "127.0.0.1", port })),
    { redisOptions: { maxRetriesPerRequest: 1 } },
  );
  await new Promise<void>((resolve, reject) => {
    client.once("ready", resolve);
    client.once("error", reject);
  });
  return client;
}

/** What a kind connects: the ioredis client the harness ages and deletes keys through, and the store's client if another. */
type Connected = { admin: Client; storeClient?: RedisStoreClient; close(): Promise<unknown> };

function redisKind(name: string, connect: () => Promise<Connected>): StoreKind {
  return {
    name,
    expiresByItself: true,
    async open() {
      const { admin, storeClient = admin, close } = await connect();
      return { fresh: async () => freshRedisStore(admin, 16, storeClient), close: async () => void (await close()) };
    },
  };
}

/** A local cluster and the ioredis client of it; `close` also stops the cluster. */
async function localCluster(): Promise<{ ports: number[]; admin: Cluster; close(): Promise<void> }> {
  const cluster = await startRedisCluster();
  const admin = await connectCluster(cluster.ports);
  return {
    ports: cluster.ports,
    admin,
    async close() {
      admin.disconnect();
      await cluster.stop();
    },
  };
}

export const redisStandaloneKind = redisKind("RedisStore (REDIS_URL)", async () => {
  const admin = await connectStandalone();
  return { admin, close: async () => admin.disconnect() };
});

export const redisClusterKind = redisKind("RedisStore (local Redis Cluster, 3 masters)", localCluster);

/** RedisStore on a node-redis client; the harness ages and deletes keys through ioredis on the same Redis. */
export const nodeRedisStandaloneKind = redisKind("RedisStore on node-redis (REDIS_URL)", async () => {
  const admin = await connectStandalone();
  const storeClient = await createClient({ url: redisUrl as string }).connect();
  const close = async () => {
    admin.disconnect();
    await storeClient.close();
  };
  return { admin, storeClient, close };
});

export const nodeRedisClusterKind = redisKind("RedisStore on node-redis (local Redis Cluster, 3 masters)", async () => {
  const cluster = await localCluster();
  const rootNodes = cluster.ports.map((port) => ({ url: `redis://127.0.0.1:${port}` }));
  const storeClient = await createCluster({ rootNodes }).connect();
  const close = async () => {
    await storeClient.close();
    await cluster.close();
  };
  return { admin: cluster.admin, storeClient, close };
});

/** Only with REDIS_URL (i.e. in CI): the clusters use the same machine's redis-server. */
export const redisStoreKinds: StoreKind[] = redisUrl
  ? [redisStandaloneKind, redisClusterKind, nodeRedisStandaloneKind, nodeRedisClusterKind]
  : [];
