// RedisRateLimitStore: GCRA in one Lua script, so each decision is one atomic step on Redis's clock; the decisions
// one turn of the event loop starts share one script call.
import { createHash } from "node:crypto";
import { rejectedWith } from "../errors";
import type { GcraRate, RateLimitStore, StoreDecision } from "../types";

/**
 * KEYS[i] a key; ARGV[2i-1] its interval, ARGV[2i] its capacity (µs). Redis runs a script alone, so
 * reading a TAT, deciding and writing it cannot interleave with another client; keys are decided in
 * order, so a key named twice is counted twice. `TIME` is Redis's clock: app servers with drifting
 * clocks still agree. A key expires when its debt is paid, when it would mean a full quota anyway.
 * TATs are written with `%.0f`: Lua's default number format keeps 14 digits, and µs since the epoch
 * have 16. A TAT beyond a full burst from now (Redis's clock stepped back) is clamped and written, so
 * the step costs the key one interval. The reply: allowed (1 or 0) and TAT for each key, then now.
 */
export const GCRA_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local reply = {}
for i = 1, #KEYS do
  local interval = tonumber(ARGV[2 * i - 1])
  local capacity = tonumber(ARGV[2 * i])
  local stored = tonumber(redis.call('GET', KEYS[i]) or now)
  local tat = math.min(math.max(stored, now), now + capacity)
  local new_tat = tat + interval
  if new_tat - now > capacity then
    if tat < stored then redis.call('SET', KEYS[i], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000)) end
    reply[2 * i - 1] = 0
    reply[2 * i] = tat
  else
    redis.call('SET', KEYS[i], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
    reply[2 * i - 1] = 1
    reply[2 * i] = new_tat
  end
end
reply[2 * #KEYS + 1] = now
return reply
`;

const SCRIPT_SHA = createHash("sha1").update(GCRA_SCRIPT).digest("hex");

/** Keys per script call at most: a long script would hold Redis, which runs nothing else meanwhile. */
export const MAX_KEYS_PER_CALL = 64;

/** Taken when this file loads: a test's fake timers do not hold decisions back. */
const nextTurn = setImmediate;

/** What the store needs of a client: an ioredis `Redis` or `Cluster` fits. */
export type RedisScriptClient = {
  evalsha(sha: string, numberOfKeys: number, ...args: Array<string | number>): Promise<unknown>;
  eval(script: string, numberOfKeys: number, ...args: Array<string | number>): Promise<unknown>;
  /** ioredis sets it: on a Cluster every call names one key (keys in different slots cannot share a script). */
  readonly isCluster?: boolean;
};

export type RedisRateLimitStoreOptions = {
  /** Prepended to every key. @default "rate-limit:" */
  prefix?: string | undefined;
  /**
   * The decisions started in one turn of the event loop go to Redis as one script call (up to 64
   * keys): one write and one command for them all instead of one each, for one turn's wait. False:
   * one call per decision, sent at once (a proxy that refuses multi-key scripts needs it).
   * @default true, and always false on a Redis Cluster
   */
  batch?: boolean | undefined;
};

/** Decisions waiting for one script call: `argv` holds each key's interval and capacity. */
type Call = {
  keys: string[];
  argv: number[];
  resolves: Array<(decision: StoreDecision) => void>;
  rejects: Array<(reason: unknown) => void>;
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
  private readonly batch: boolean;
  /** The call the decisions of this turn join; sent when the turn ends, or once it holds MAX_KEYS_PER_CALL keys. */
  private open: Call | undefined;
  private readonly sendOpen = (): void => {
    if (this.open) this.send(this.open);
  };

  constructor(redis: RedisScriptClient, options: RedisRateLimitStoreOptions = {}) {
    this.redis = redis;
    this.prefix = options.prefix ?? "rate-limit:";
    this.batch = (options.batch ?? true) && redis.isCluster !== true;
  }

  take(key: string, rate: GcraRate): Promise<StoreDecision> {
    return new Promise<StoreDecision>((resolve, reject) => {
      let call = this.batch ? this.open : undefined;
      if (call === undefined) {
        call = { keys: [], argv: [], resolves: [], rejects: [] };
        if (this.batch) {
          this.open = call;
          nextTurn(this.sendOpen);
        }
      }
      call.keys.push(`${this.prefix}${key}`);
      call.argv.push(rate.intervalUs, rate.capacityUs);
      call.resolves.push(resolve);
      call.rejects.push(reject);
      if (!this.batch || call.keys.length === MAX_KEYS_PER_CALL) this.send(call);
    });
  }

  private send(call: Call): void {
    if (this.open === call) this.open = undefined;
    const { keys, argv, resolves, rejects } = call;
    let sent: Promise<unknown>;
    try {
      sent = this.redis.evalsha(SCRIPT_SHA, keys.length, ...keys, ...argv).catch((err: unknown) => {
        // Only the first call after a Redis restart or SCRIPT FLUSH: EVAL runs and caches the script.
        if (!String((err as Error | undefined)?.message).startsWith("NOSCRIPT")) throw err;
        return this.redis.eval(GCRA_SCRIPT, keys.length, ...keys, ...argv);
      });
    } catch (err) {
      // A client that throws instead of rejecting fails each decision like any other error.
      sent = rejectedWith(err);
    }
    sent.then(
      (reply) => {
        if (!Array.isArray(reply) || reply.length !== 2 * keys.length + 1) {
          return fail(rejects, new Error(`Unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`));
        }
        const now = Number(reply[reply.length - 1]);
        for (let i = 0; i < keys.length; i++) {
          resolves[i]?.({ allowed: reply[2 * i] === 1, tat: Number(reply[2 * i + 1]), now });
        }
      },
      (err: unknown) => fail(rejects, err),
    );
  }
}

function fail(rejects: Array<(reason: unknown) => void>, err: unknown): void {
  for (const reject of rejects) reject(err);
}
