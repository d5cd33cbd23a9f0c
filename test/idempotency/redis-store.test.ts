// RedisStore beyond the shared contract: key layout, scripts called by hash, recovery over every bucket bounded by `limit`.
import { randomUUID } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisStore } from "@/blocks/idempotency/stores/redis-store";
import { redisUrl } from "./support/services";
import { startRedisCluster, type LocalRedisCluster } from "./support/redis-cluster";
import { freshRedisStore } from "./support/redis-store-harness";

const MINUTE = 60_000;
const KINDS = ["standalone", "Redis Cluster"] as const;

describe.skipIf(!redisUrl)("[REDIS_URL] RedisStore", () => {
  let cluster: LocalRedisCluster;
  let clients: Array<[string, Redis | Cluster]>;
  const clientOf = (kind: string) => clients.find(([name]) => name === kind)![1];

  beforeAll(async () => {
    cluster = await startRedisCluster();
    const onCluster = new Cluster(
      cluster.ports.map((port) => ({ host: "127.0.0.1", port })),
      { redisOptions: { maxRetriesPerRequest: 1 } },
    );
    await new Promise((resolve) => onCluster.once("ready", resolve));
    clients = [
      ["standalone", new Redis(redisUrl as string, { maxRetriesPerRequest: 1 })],
      ["Redis Cluster", onCluster],
    ];
  }, 30_000);
  afterAll(async () => {
    for (const [, client] of clients ?? []) client.disconnect();
    await cluster?.stop();
  });

  it("refuses a key prefix with braces: it would put every key in one hash slot", () => {
    expect(() => new RedisStore(clients[0]![1], { keyPrefix: "{app}:" })).toThrow(/braces/);
  });

  it("reads back tokens, request hashes and responses outside ASCII, with colons and NUL bytes, and fences a token against its own prefix", async () => {
    const harness = freshRedisStore(clientOf("standalone"));
    const scope = { operation: "payments:create", userId: "u_€", key: randomUUID() };
    const token = `tök€n:\u0000${randomUUID()}😀`;
    await harness.store.create({ scope, requestHash: "h:é:\u00001", ttlMs: MINUTE, token });
    expect(await harness.store.markSuccess(scope, token.slice(0, -2), "{}", MINUTE)).toBe(false);
    expect(await harness.store.markStep(scope, token, "charge", '"€"', MINUTE)).toBe(true);
    expect(await harness.store.markSuccess(scope, token, '{"note":"€ = 1:2"}\u0000', MINUTE)).toBe(true);
    const found = await harness.store.create({ scope, requestHash: "other", ttlMs: MINUTE, token: randomUUID() });
    expect(found).toMatchObject({
      status: "DUPLICATE",
      record: { token, requestHash: "h:é:\u00001", response: '{"note":"€ = 1:2"}\u0000', status: "SUCCESS" },
    });
    expect(await harness.store.get(scope)).toMatchObject({
      token,
      requestHash: "h:é:\u00001",
      steps: { charge: '"€"' },
    });
    await expect(harness.store.create({ scope, requestHash: "h", ttlMs: 2e15, token })).rejects.toThrow(/ttlMs/);
    await harness.close();
  });

  it.each(KINDS)("keeps a scope's record and counter under one hash tag, readable by a person (%s)", async (kind) => {
    const client = clientOf(kind);
    const harness = freshRedisStore(client);
    const scope = { operation: "payments:create", userId: "u_1", key: randomUUID() };
    await harness.store.create({ scope, requestHash: "h", ttlMs: MINUTE, token: randomUUID() });
    await harness.store.incrementRetryCount(scope, MINUTE);
    const keys: string[] = [];
    const nodes = client instanceof Cluster ? client.nodes("master") : [client];
    for (const node of nodes) keys.push(...(await node.keys(`${harness.prefix}*`)));
    const tag = /\{idempotency_records:\d+\}/.exec(keys[0] ?? "")?.[0];
    const member = JSON.stringify([scope.operation, scope.userId, scope.key]);
    expect(keys.sort()).toEqual([
      `${harness.prefix}${tag}:n:${member}`,
      `${harness.prefix}${tag}:processing`,
      `${harness.prefix}${tag}:r:${member}`,
    ]);
    await harness.close();
  });

  it.each(KINDS)("loads each script once, then calls it by its SHA (%s)", async (kind) => {
    const client = clientOf(kind);
    const sent: string[] = [];
    const nodes = client instanceof Cluster ? client.nodes("all") : [client];
    const restore = nodes.map((node) => {
      const send = node.sendCommand.bind(node);
      node.sendCommand = (...args: Parameters<Redis["sendCommand"]>) => (
        sent.push(args[0].name.toLowerCase()),
        send(...args)
      );
      return () => void (node.sendCommand = send);
    });
    const harness = freshRedisStore(client);
    await harness.store.create({
      scope: { operation: "o", userId: "u", key: randomUUID() },
      requestHash: "h",
      ttlMs: MINUTE,
      token: randomUUID(),
    });
    // Flushing the script cache would disturb others on the shared Redis: instead, expect at most one
    // EVAL per master (each server caches scripts for itself, so a cluster loads it on each one).
    for (let n = 0; n < 20; n++) {
      await harness.store.create({
        scope: { operation: "o", userId: "u", key: randomUUID() },
        requestHash: "h",
        ttlMs: MINUTE,
        token: randomUUID(),
      });
    }
    restore.forEach((undo) => undo());
    expect(sent.filter((name) => name === "eval").length).toBeLessThanOrEqual(
      client instanceof Cluster ? client.nodes("master").length : 1,
    );
    expect(sent.filter((name) => name === "evalsha").length).toBeGreaterThanOrEqual(20);
    await harness.close();
  });

  it.each(KINDS)(
    "recovers stuck records across all 256 buckets, at most `limit` in total per call (%s)",
    async (kind) => {
      const client = clientOf(kind);
      const prefix = `test:idem:${randomUUID().slice(0, 8)}:`;
      const store = new RedisStore(client, { keyPrefix: prefix });
      const scopes = Array.from({ length: 30 }, (_, n) => ({ operation: "o", userId: "u", key: `k-${n}` }));
      for (const scope of scopes)
        await store.create({ scope, requestHash: "h", ttlMs: 60 * MINUTE, token: randomUUID() });
      await new Promise((resolve) => setTimeout(resolve, 5)); // every heartbeat strictly older than "now"
      const first = await store.recoverStuckRecords({ olderThanMs: 0, limit: 7, maxRetries: 3, ttlMs: 60 * MINUTE });
      const rest = await store.recoverStuckRecords({ olderThanMs: 0, limit: 100, maxRetries: 3, ttlMs: 60 * MINUTE });
      expect(first).toHaveLength(7);
      expect(new Set([...first, ...rest].map((r) => r.key)).size).toBe(30);
      expect(
        await store.recoverStuckRecords({ olderThanMs: 0, limit: 100, maxRetries: 3, ttlMs: 60 * MINUTE }),
      ).toEqual([]);
      for (const node of client instanceof Cluster ? client.nodes("master") : [client]) {
        for (const key of await node.keys(`${prefix}*`)) await client.del(key);
      }
    },
  );
});
