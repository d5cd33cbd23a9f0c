// RedisRateLimitStore: GCRA in one Lua script, so each decision is one atomic round trip on Redis's clock.
import { createHash } from "node:crypto";
import type { GcraRate, RateLimitStore, StoreDecision } from "../types";

/**
 * KEYS[1] the key; ARGV[1] interval, ARGV[2] capacity (µs). Redis runs a script alone, so reading
 * the TAT, deciding and writing it cannot interleave with another client. `TIME` is Redis's clock:
 * app servers with drifting clocks still agree. The key expires when its debt is paid, when it
 * would mean a full quota anyway. TATs are written with `%.0f`: Lua's default number format keeps
 * 14 digits, and µs since the epoch have 16. A TAT beyond a full burst from now (Redis's clock
 * stepped back) is clamped and written, so the step costs the key one interval.
 */
export const GCRA_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local stored = tonumber(redis.call('GET', KEYS[1]) or now)
local tat = math.min(math.max(stored, now), now + capacity)
local new_tat = tat + interval
if new_tat - now > capacity then
  if tat < stored then redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000)) end
  return {0, tat, now}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
return {1, new_tat, now}
`;

const SCRIPT_SHA = createHash("sha1").update(GCRA_SCRIPT).digest("hex");

/** What the store needs of a client: an ioredis `Redis` or `Cluster` fits. */
export type RedisScriptClient = {
  evalsha(sha: string, numberOfKeys: number, ...args: Array<string | number>): Promise<unknown>;
  eval(script: string, numberOfKeys: number, ...args: Array<string | number>): Promise<unknown>;
};

export type RedisRateLimitStoreOptions = {
  /** Prepended to every key. @default "rate-limit:" */
  prefix?: string | undefined;
};

/**
 * Give the client `enableOfflineQueue: false` (or a low `maxRetriesPerRequest`): while Redis is
 * down, ioredis otherwise queues commands, and each decision waits for the limiter's timeout.
 *
 * @example
 * const store = new RedisRateLimitStore(new Redis(process.env.REDIS_URL, { enableOfflineQueue: false }));
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: RedisScriptClient;
  private readonly prefix: string;

  constructor(redis: RedisScriptClient, options: RedisRateLimitStoreOptions = {}) {
    this.redis = redis;
    this.prefix = options.prefix ?? "rate-limit:";
  }

  take(key: string, rate: GcraRate): Promise<StoreDecision> {
    const stored = `${this.prefix}${key}`;
    // No async function and no argument array: every allowed request passes here.
    return this.redis
      .evalsha(SCRIPT_SHA, 1, stored, rate.intervalUs, rate.capacityUs)
      .then(storeDecision, (err: unknown) => {
        // Only the first call after a Redis restart or SCRIPT FLUSH: EVAL runs and caches the script.
        if (!String((err as Error | undefined)?.message).startsWith("NOSCRIPT")) throw err;
        return this.redis.eval(GCRA_SCRIPT, 1, stored, rate.intervalUs, rate.capacityUs).then(storeDecision);
      });
  }
}

function storeDecision(reply: unknown): StoreDecision {
  const [allowed, tat, now] = reply as [number, number, number];
  return { allowed: allowed === 1, tat: Number(tat), now: Number(now) };
}
