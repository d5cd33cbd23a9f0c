// Scenario 4: store and cache round trips per request, counted on instrumented pg and ioredis clients.
import { IdempotencyHandler, PostgresStore, type ExecuteContext } from "@/blocks/idempotency";
import { RedisCache } from "@/blocks/idempotency/caches/redis-cache";
import { countPoolQueries, countRedisCommands, RoundTripCounter, type RoundTrips } from "../support/count-calls";
import { createRunTable, openPool, openRedis, runId } from "../support/services";

export type RoundTripCase = { name: string; target: string; met: boolean } & RoundTrips;

/** `run` may return its own count when only part of what it does is the request being measured. */
type Probe = { name: string; target: string; check: (trips: RoundTrips) => boolean; run: () => Promise<unknown> };

export async function roundTrips(): Promise<RoundTripCase[]> {
  const counter = new RoundTripCounter();
  const pool = countPoolQueries(openPool(), counter);
  const redis = countRedisCommands(openRedis(), counter);
  try {
    await redis.ping();
    const table = await createRunTable(pool, "trips");
    const store = new PostgresStore(pool, { table });
    const plain = new IdempotencyHandler(store);
    const cached = new IdempotencyHandler(store, new RedisCache(redis, { prefix: `bench:${runId}:trips:` }));
    const cold = new IdempotencyHandler(store, new RedisCache(redis, { prefix: `bench:${runId}:cold:` }));
    const context = (key: string, amount = 1000): ExecuteContext => ({
      operation: "POST /payments",
      userId: "u_bench",
      key: `${runId}-${key}`,
      payload: { amount, currency: "EUR" },
    });
    const charge = () => ({ id: "pay_1", status: "captured" });
    const delivery = {
      source: "bench",
      messageId: `${runId}-evt`,
      payload: { type: "charge.succeeded", amount: 1000 },
    };
    const expectError = (promise: Promise<unknown>) =>
      promise.then(
        () => Promise.reject(new Error("expected a rejection")),
        () => undefined,
      );

    const probes: Probe[] = [
      {
        name: "first request",
        target: "store = 2",
        check: (t) => t.store === 2,
        run: () => plain.execute(context("a"), charge),
      },
      {
        name: "replay, no cache",
        target: "store <= 1",
        check: (t) => t.store <= 1,
        run: () => plain.execute(context("a"), charge),
      },
      {
        name: "inbox: first delivery (consume)",
        target: "store = 2",
        check: (t) => t.store === 2,
        run: () => plain.consume(delivery, charge),
      },
      {
        name: "inbox: duplicate delivery",
        target: "store = 1",
        check: (t) => t.store === 1,
        run: () => plain.consume(delivery, charge),
      },
      {
        name: "first request, with cache",
        target: "store = 2",
        check: (t) => t.store === 2,
        run: () => cached.execute(context("b"), charge),
      },
      {
        name: "replay, cache hit",
        target: "store = 0",
        check: (t) => t.store === 0,
        run: () => cached.execute(context("b"), charge),
      },
      {
        name: "replay, cache miss (cold cache)",
        target: "store <= 1",
        check: (t) => t.store <= 1,
        run: () => cold.execute(context("a"), charge),
      },
      {
        name: "conflict (same key, other payload), no cache",
        target: "store <= 1",
        check: (t) => t.store <= 1,
        run: () => expectError(plain.execute(context("a", 7), charge)),
      },
      {
        name: "conflict, cache hit",
        target: "store = 0",
        check: (t) => t.store === 0,
        run: () => expectError(cached.execute(context("b", 7), charge)),
      },
      {
        name: "duplicate while the first still runs",
        target: "store <= 1",
        check: (t) => t.store <= 1,
        run: async () => {
          let finish = () => {};
          let running = () => {};
          const started = new Promise<void>((resolve) => (running = resolve));
          const first = plain.execute(context("c"), () => {
            running();
            return new Promise<void>((resolve) => (finish = resolve));
          });
          await started;
          counter.reset();
          await expectError(plain.execute(context("c"), charge));
          const trips = counter.snapshot();
          finish();
          await first;
          return trips;
        },
      },
    ];

    const cases: RoundTripCase[] = [];
    for (const probe of probes) {
      counter.reset();
      const own = await probe.run();
      const trips = isRoundTrips(own) ? own : counter.snapshot();
      cases.push({ name: probe.name, target: probe.target, met: probe.check(trips), ...trips });
      console.log(`  ${probe.name.padEnd(46)} store ${trips.store}  cache ${trips.cache}  (${probe.target})`);
    }
    return cases;
  } finally {
    redis.disconnect();
    await pool.end();
  }
}

function isRoundTrips(value: unknown): value is RoundTrips {
  return typeof value === "object" && value !== null && "store" in value && "cache" in value;
}
