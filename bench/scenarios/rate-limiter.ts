// The rate limiter's cost: server CPU per request it adds on memory (Express, vs the bare route), and store round trips per decision.
// Run alone: `npx tsx bench/scenarios/rate-limiter.ts` (REDIS_URL / DATABASE_URL add the Redis and PostgreSQL counts).
// BENCH_RL_REQUESTS (default 20000) requests per round, BENCH_RL_ROUNDS (default 5); CPU is the server process's own process.cpuUsage().
import { fork, type ChildProcess } from "node:child_process";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import express from "express";
import type { Redis } from "ioredis";
import { rateLimit } from "@/blocks/rate-limiter/adapters/express";
import { limitRoute } from "@/blocks/rate-limiter/http/limit-route";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { MemoryRateLimitStore } from "@/blocks/rate-limiter/stores/memory-store";
import { PostgresRateLimitStore, type SqlClient } from "@/blocks/rate-limiter/stores/postgres-store";
import { dropStatements } from "@/blocks/rate-limiter/stores/postgres-schema";
import { RedisRateLimitStore } from "@/blocks/rate-limiter/stores/redis-store";

type Variant = "bare" | "limited";
const SELF = fileURLToPath(import.meta.url);
const REQUESTS = Number(process.env.BENCH_RL_REQUESTS ?? 20_000);
const USERS = 1_000;
const ROUNDS = Number(process.env.BENCH_RL_ROUNDS ?? 5);

/** Child side: one Express app, with or without the limiter on its route, reporting its own CPU over IPC. */
function serve(variant: Variant): void {
  const app = express();
  // A quota nobody reaches: every request takes the full allowed path (store write, headers).
  const limiter = new RateLimiter(new MemoryRateLimitStore(), { name: "bench", limit: 1_000_000_000, windowMs: 60_000 });
  const guards = variant === "limited" ? [rateLimit(limiter, { getUserId: (req) => req.get("x-user") })] : [];
  app.get("/payments", ...guards, (_req, res) => void res.json({ ok: true }));
  const server = app.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as AddressInfo).port }));
  process.on("message", (message) => {
    if (message === "cpu") process.send?.({ cpu: process.cpuUsage() });
    if (message === "stop") server.close(() => process.exit(0));
  });
}

async function startServer(variant: Variant): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(SELF, ["serve", variant], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const port = await new Promise<number>((resolve) => child.once("message", (m: { port: number }) => resolve(m.port)));
  return { child, url: `http://127.0.0.1:${port}/payments` };
}

function cpuMicros(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once("message", (m: { cpu: NodeJS.CpuUsage }) => resolve(m.cpu.user + m.cpu.system));
    child.send("cpu");
  });
}

async function fire(url: string, amount: number): Promise<void> {
  let n = 0;
  await autocannon({
    url,
    connections: 10,
    amount,
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, "x-user": `u_${n++ % USERS}` } }) }],
  });
}

/** Server CPU per request, in microseconds, for each variant; the rounds alternate so load drift hits both. */
async function cpuPerRequest(): Promise<Record<Variant, number[]>> {
  const servers = { bare: await startServer("bare"), limited: await startServer("limited") };
  const results: Record<Variant, number[]> = { bare: [], limited: [] };
  try {
    for (const { url } of Object.values(servers)) await fire(url, 2_000); // warm-up (JIT)
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of ["bare", "limited"] as const) {
        const { child, url } = servers[variant];
        const before = await cpuMicros(child);
        await fire(url, REQUESTS);
        results[variant].push(((await cpuMicros(child)) - before) / REQUESTS);
      }
    }
  } finally {
    for (const { child } of Object.values(servers)) child.send("stop");
  }
  return results;
}

/**
 * The limiter alone, in this process: CPU per request of the shared HTTP step (key, decision on the
 * memory store, headers), which every adapter runs. Steadier than the HTTP difference above.
 */
async function inProcessMicros(): Promise<number> {
  const limiter = new RateLimiter(new MemoryRateLimitStore(), { name: "bench", limit: 1_000_000_000, windowMs: 60_000 });
  const limit = limitRoute(limiter, { getUserId: (req: { user: string }) => req.user }, {
    userIdOf: () => undefined,
    ipOf: () => undefined,
    routeOf: () => "GET /payments",
    headerOf: () => undefined,
  });
  const run = async (n: number) => {
    for (let i = 0; i < n; i++) await limit({ user: `u_${i % USERS}` });
  };
  await run(50_000); // warm-up (JIT)
  const before = process.cpuUsage();
  await run(200_000);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 200_000;
}

/** Commands sent per decision on Redis, counted on ioredis's one path to the server. */
async function redisCommandsPerDecision(url: string): Promise<{ decisions: number; commands: number; names: string[] }> {
  const { Redis } = await import("ioredis");
  const redis: Redis = new Redis(url, { enableOfflineQueue: false, lazyConnect: true });
  await redis.connect();
  const prefix = `bench-rl-${process.pid}:`;
  const names = new Set<string>();
  let commands = 0;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (...args: Parameters<Redis["sendCommand"]>) => {
    commands++;
    names.add(args[0].name);
    return send(...args);
  };
  const limiter = new RateLimiter(new RedisRateLimitStore(redis, { prefix }), { name: "bench", limit: 5, windowMs: 60_000 });
  try {
    await limiter.check("warm-up"); // the first call may load the script (NOSCRIPT, then EVAL)
    commands = 0;
    names.clear();
    const decisions = 1_000;
    for (let i = 0; i < decisions; i++) await limiter.check(`u_${i % 100}`); // allowed and refused alike
    return { decisions, commands, names: [...names] };
  } finally {
    redis.sendCommand = send;
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
}

/** Statements sent per decision on PostgreSQL, counted on the client the store holds. */
async function postgresStatementsPerDecision(url: string): Promise<{ decisions: number; statements: number }> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  let statements = 0;
  const counting: SqlClient = { query: (text, params) => (statements++, pool.query(text, params)) };
  const store = new PostgresRateLimitStore(counting, { table: `bench_rl_${process.pid}` });
  try {
    await store.createSchema();
    const limiter = new RateLimiter(store, { name: "bench", limit: 5, windowMs: 60_000 });
    statements = 0;
    const decisions = 500;
    for (let i = 0; i < decisions; i++) await limiter.check(`u_${i % 50}`);
    return { decisions, statements };
  } finally {
    for (const statement of dropStatements(store.table)) await pool.query(statement);
    await pool.end();
  }
}

export type RateLimiterBenchResult = {
  requests: number;
  /**
   * Server CPU per request (µs) without and with the limiter: the fewest of the rounds, since other
   * load on the machine only ever adds to it; each round is kept too.
   */
  bareUs: number;
  limitedUs: number;
  rounds: Record<Variant, number[]>;
  /** CPU per request of the shared HTTP step alone, in this process. */
  inProcessUs: number;
  redis?: { decisions: number; commands: number; names: string[] };
  postgres?: { decisions: number; statements: number };
};

/** Everything this scenario measures, for bench/run.ts to record. */
export async function rateLimiterBench(): Promise<RateLimiterBenchResult> {
  const rounds = await cpuPerRequest();
  const result: RateLimiterBenchResult = {
    requests: REQUESTS,
    bareUs: Math.min(...rounds.bare),
    limitedUs: Math.min(...rounds.limited),
    rounds,
    inProcessUs: await inProcessMicros(),
  };
  if (process.env.REDIS_URL) result.redis = await redisCommandsPerDecision(process.env.REDIS_URL);
  if (process.env.DATABASE_URL) result.postgres = await postgresStatementsPerDecision(process.env.DATABASE_URL);
  return result;
}

function print(result: RateLimiterBenchResult): void {
  const us = (values: number[]) => values.map((v) => v.toFixed(1)).join(", ");
  console.log(`server CPU per request, Express GET, ${result.requests} requests x ${ROUNDS} rounds, ${USERS} users (fewest of the rounds):`);
  console.log(`  bare route          ${result.bareUs.toFixed(1)} us   rounds: ${us(result.rounds.bare)}`);
  console.log(`  + rateLimit(memory) ${result.limitedUs.toFixed(1)} us   rounds: ${us(result.rounds.limited)}`);
  console.log(`  added by the limiter: ${(result.limitedUs - result.bareUs).toFixed(1)} us per request (noisy on a shared machine)`);
  console.log(`in-process, the shared HTTP step alone (key + memory decision + headers): ${result.inProcessUs.toFixed(2)} us CPU per request`);
  const { redis, postgres } = result;
  console.log(
    redis
      ? `Redis: ${redis.commands} commands for ${redis.decisions} decisions = ${(redis.commands / redis.decisions).toFixed(2)} per decision (${redis.names.join(", ")})`
      : "Redis: skipped (set REDIS_URL)",
  );
  console.log(
    postgres
      ? `PostgreSQL: ${postgres.statements} statements for ${postgres.decisions} decisions = ${(postgres.statements / postgres.decisions).toFixed(2)} per decision`
      : "PostgreSQL: skipped (set DATABASE_URL)",
  );
}

if (process.argv[2] === "serve") serve(process.argv[3] as Variant);
else if (process.argv[1] === SELF) void rateLimiterBench().then(print);
