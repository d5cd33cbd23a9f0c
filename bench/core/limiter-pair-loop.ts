// Run as a bundle by bench/limiter-cpu.ts: the CPU of one allowed decision on Redis in this process, ours against
// rate-limiter-flexible's and a bare EVALSHA of our script, in alternating rounds (A B C, then C B A, ...).
// argv: redisUrl calls rounds prefix
import { Redis } from "ioredis";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { limitRoute } from "@/blocks/rate-limiter/http/limit-route";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { GCRA_SCRIPT, RedisRateLimitStore } from "@/blocks/rate-limiter/stores/redis-store";
import { alternateRounds } from "../support/in-process-rounds";

const [redisUrl = "redis://127.0.0.1:6379", callsArg = "50000", roundsArg = "5", prefix = "bench:limiter-cpu:"] =
  process.argv.slice(2);
const CALLS = Number(callsArg);
const ROUNDS = Number(roundsArg);
const LANES = 16;
const USERS = 1_000;
const LIMIT = 10_000_000;

type Variant = { name: string; call: (i: number) => Promise<unknown> };

const FAKE_DEFAULTS = {
  userIdOf: () => undefined,
  peerOf: () => "127.0.0.1",
  routeOf: () => "POST /payments",
  headerOf: () => undefined,
};

/**
 * LIMITER_CPU_FAKE=1: a client that answers every script at once, in this process, with what Redis would answer:
 * only the JavaScript of each side is left (no socket, no parser), so small differences show.
 */
function fakeClient(): Redis {
  // Our script's reply: allowed and TAT for each key (the store may send several in one call), then now.
  const answer = (keys: number, args: unknown[]) => {
    const now = Date.now() * 1000;
    const reply: number[] = [];
    for (let i = 0; i < keys; i++) reply.push(1, now + Number(args[keys + 2 * i]));
    reply.push(now);
    return Promise.resolve(reply);
  };
  const client = {
    evalsha: (_sha: string, keys: number, ...args: unknown[]) => answer(keys, args),
    eval: (_script: string, keys: number, ...args: unknown[]) => answer(keys, args),
    script: () => Promise.resolve("sha"),
    defineCommand(name: string) {
      (client as Record<string, unknown>)[name] = () => Promise.resolve([1, 60_000]);
    },
  };
  return client as unknown as Redis;
}

async function variants(real: Redis): Promise<Variant[]> {
  const redis = process.env.LIMITER_CPU_FAKE === "1" ? fakeClient() : real;
  const ours = new RateLimiter(new RedisRateLimitStore(redis, { prefix: `${prefix}ours:` }), {
    name: "bench",
    limit: LIMIT,
    windowMs: 60_000,
  });
  const step = limitRoute(ours, { getUserId: (req: { user: string }) => req.user }, FAKE_DEFAULTS);
  const quiet = limitRoute(ours, { getUserId: (req: { user: string }) => req.user, headers: false }, FAKE_DEFAULTS);
  const rlf = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}rlf`, points: LIMIT, duration: 60 });
  const sha = String(await redis.script("LOAD", GCRA_SCRIPT));
  const users = Array.from({ length: USERS }, (_, i) => `u_${i}`);
  const requests = users.map((user) => ({ user }));
  return [
    {
      name: "evalsha alone (our script)",
      call: (i) => redis.evalsha(sha, 1, `${prefix}raw:${users[i % USERS]}`, 6000, 60_000_000_000),
    },
    { name: "rate-limiter-flexible consume()", call: (i) => rlf.consume(users[i % USERS] as string) },
    {
      name: "ours limiter.check()",
      call: (i) => ours.check(JSON.stringify(["POST /payments", `user:${users[i % USERS]}`])),
    },
    { name: "ours limitRoute() (key, decision, headers)", call: (i) => step(requests[i % USERS] as { user: string }) },
    { name: "ours limitRoute(), headers: false", call: (i) => quiet(requests[i % USERS] as { user: string }) },
  ];
}

async function run(variant: Variant, calls: number): Promise<number> {
  let next = 0;
  const lane = async () => {
    while (next < calls) await variant.call(next++);
  };
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: LANES }, lane));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

async function main(): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    // LIMITER_CPU_ONLY=check: only the variants whose name contains it (e.g. to profile one).
    const only = process.env.LIMITER_CPU_ONLY;
    const list = (await variants(redis)).filter((v) => !only || v.name.includes(only));
    const rows = await alternateRounds(list, run, { warmup: 5_000, calls: CALLS, rounds: ROUNDS });
    console.log(JSON.stringify(rows));
  } finally {
    let cursor = "0";
    do {
      const [nextCursor, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length) await redis.unlink(...keys);
      cursor = nextCursor;
    } while (cursor !== "0");
    redis.disconnect();
  }
}

await main();
