// The app's own CPU per first request through RedisStore (create + markSuccess) on each Redis client: ioredis as the
// wiring sets it up (auto-pipelining), and node-redis as `createClient` comes (RESP3). The clients alternate per
// round, order reversed every other round. `npx tsx bench/redis-client-cpu.ts [pairs] [rounds]` (REDIS_URL).
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { createClient } from "redis";
import { RedisStore } from "@/blocks/idempotency/stores/redis-store";
import { median, round } from "./report/stats";
import { settings } from "./config";

const [pairsArg = "20000", roundsArg = "6"] = process.argv.slice(2);
const PAIRS = Number(pairsArg);
const ROUNDS = Number(roundsArg);
/** Requests in flight at once, as the HTTP scenarios' connections. */
const IN_FLIGHT = 16;
const RESPONSE = JSON.stringify({ id: "pay_1", amount: 1000, currency: "EUR", status: "captured" });
const prefix = `bench:clients:${randomUUID().slice(0, 8)}:`;

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function pairs(store: RedisStore, count: number): Promise<number> {
  let started = 0;
  const before = cpuMicros();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (started < count) {
        started++;
        const scope = { operation: "payments:create", userId: "u_bench", key: randomUUID() };
        const token = randomUUID();
        await store.create({ scope, requestHash: "h".repeat(64), ttlMs: 60_000, token });
        await store.markSuccess(scope, token, RESPONSE, 60_000);
      }
    }),
  );
  return (cpuMicros() - before) / count;
}

async function main(): Promise<void> {
  const ioredis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  const nodeRedis = await createClient({ url: settings.redisUrl }).connect();
  const stores: Array<[string, RedisStore]> = [
    ["ioredis", new RedisStore(ioredis, { keyPrefix: prefix })],
    ["node-redis", new RedisStore(nodeRedis, { keyPrefix: prefix })],
  ];
  const figures = new Map<string, number[]>(stores.map(([name]) => [name, []]));
  try {
    for (const [, store] of stores) await pairs(store, 2_000);
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? stores : [...stores].reverse();
      for (const [name, store] of order) {
        const us = await pairs(store, PAIRS);
        figures.get(name)?.push(round(us, 1));
        console.log(`  r${r} ${name.padEnd(10)} ${us.toFixed(1)} µs of app CPU per first request`);
      }
    }
    const [io, node] = [figures.get("ioredis") ?? [], figures.get("node-redis") ?? []];
    const ratios = node.map((us, i) => us / (io[i] as number));
    console.log(
      `median: ioredis ${median(io)} µs, node-redis ${median(node)} µs; node-redis / ioredis per round ${round(median(ratios), 2)}x (${ROUNDS} rounds of ${PAIRS})`,
    );
  } finally {
    let cursor = "0";
    do {
      const [next, keys] = await ioredis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length) await ioredis.del(...keys);
    } while (cursor !== "0");
    ioredis.disconnect();
    await nodeRedis.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
