// Where a request's CPU goes: server process and PostgreSQL, per request, for the servers of a preset.
// `npx tsx bench/cpu-per-request.ts floor|memory|fastify|hono|fetch|nestjs|nestjs-fastify|redis[-replay]` (Linux: reads /proc). Used to explain missed targets.
import autocannon from "autocannon";
import { settings } from "./config";
import { PAYMENT_BODY } from "./load/load-plan";
import { startServerSet, type ServerWish } from "./support/server-set";
import { postgresCpu, postgresCpuSince, processCpuSeconds } from "./support/proc-cpu";
import { redisCpuSeconds } from "./support/redis-info";
import { deleteRunKeys, dropRunTables, openPool, openRedis, runId } from "./support/services";
import type { RunningServer } from "./support/spawn-server";

/** The bare route, then our wrapper and capture styles on MemoryStore. */
function bareAndBothStyles(framework: "fastify" | "hono" | "fetch" | "nestjs" | "nestjs-fastify"): ServerWish[] {
  return [
    { framework, variant: "bare", backend: "none" },
    { framework, variant: "block", backend: "memory", style: "wrapper" },
    { framework, variant: "block", backend: "memory", style: "capture" },
  ];
}

/** NestJS has one style, `@Idempotent()` with its interceptor; an interceptor doing nothing is its floor. */
function nestWishes(framework: "nestjs" | "nestjs-fastify"): ServerWish[] {
  return [...bareAndBothStyles(framework).slice(0, 2), { framework, variant: "noop-interceptor", backend: "none" }];
}

const PRESETS: Record<string, ServerWish[]> = {
  floor: [
    { framework: "express", variant: "floor", backend: "postgres" },
    { framework: "express", variant: "block", backend: "postgres", style: "wrapper" },
    { framework: "express", variant: "block", backend: "postgres-prepared", style: "wrapper" },
  ],
  memory: [
    { framework: "express", variant: "bare", backend: "none" },
    { framework: "express", variant: "block", backend: "memory", style: "wrapper" },
    { framework: "express", variant: "block", backend: "memory", style: "capture" },
    { framework: "express", variant: "node-idempotency", backend: "memory" },
  ],
  fastify: bareAndBothStyles("fastify"),
  hono: bareAndBothStyles("hono"),
  /** The fetch adapter: capture is `withIdempotency`, wrapper is its `idempotent`. */
  fetch: bareAndBothStyles("fetch"),
  nestjs: nestWishes("nestjs"),
  "nestjs-fastify": nestWishes("nestjs-fastify"),
  /** Our RedisStore (no cache) against the peers' own Redis storages. */
  redis: [
    { framework: "express", variant: "block", backend: "redis-store", style: "wrapper" },
    { framework: "express", variant: "block", backend: "redis-store", style: "capture" },
    { framework: "express", variant: "block", backend: "redis-store-node-redis", style: "wrapper" },
    { framework: "express", variant: "express-idempotency", backend: "redis" },
    { framework: "express", variant: "node-idempotency", backend: "redis" },
  ],
};
const REQUESTS = Number(process.env.BENCH_CPU_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_CPU_ROUNDS ?? 2);

let sent = 0;
async function fire(server: RunningServer, amount: number, replay: boolean): Promise<void> {
  await autocannon({
    url: `${server.url}/payments`,
    method: "POST",
    connections: settings.connections,
    amount,
    headers: { "content-type": "application/json" },
    body: PAYMENT_BODY,
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          headers: { ...request.headers, "idempotency-key": `${runId}-cpu-${replay ? sent++ % 200 : sent++}` },
        }),
      },
    ],
  });
}

async function main(): Promise<void> {
  const [preset = "floor"] = process.argv.slice(2);
  const replay = preset.endsWith("-replay");
  const wishes = PRESETS[preset.replace(/-replay$/, "")];
  if (!wishes)
    throw new Error(`unknown preset "${preset}"; known: ${Object.keys(PRESETS).join(", ")} (optionally with -replay)`);
  const pool = openPool(1);
  const redis = openRedis();
  const set = await startServerSet(pool, "cpu", wishes);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of set.servers) {
        await fire(server, 2_000, replay);
        const serverBefore = processCpuSeconds(server.pid);
        const postgresBefore = postgresCpu();
        const redisBefore = await redisCpuSeconds(redis);
        await fire(server, REQUESTS, replay);
        const perRequest = (seconds: number) => `${Math.round((seconds / REQUESTS) * 1e6)} us`.padStart(7);
        console.log(
          `${server.label.padEnd(40)} server ${perRequest(processCpuSeconds(server.pid) - serverBefore)}  postgres ${perRequest(postgresCpuSince(postgresBefore))}  redis ${perRequest((await redisCpuSeconds(redis)) - redisBefore)}`,
        );
      }
    }
  } finally {
    await set.stopAll();
    await dropRunTables(pool);
    await pool.end();
    await deleteRunKeys(redis).finally(() => redis.disconnect());
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
