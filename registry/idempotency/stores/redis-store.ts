// RedisStore: the IdempotencyStore contract on Redis (ioredis or node-redis), standalone or Redis Cluster.
import type {
  CreateInput,
  CreateResult,
  IdempotencyRecord,
  IdempotencyScope,
  IdempotencyStore,
  RecoveredRecord,
  RecoverInput,
} from "../types";
import { commandSender, type RedisStoreClient, type SendCommand } from "./redis-client";
import {
  fromFields,
  fromMember,
  fromPairs,
  hashOf,
  parseRecord,
  scoredMembers,
  type Fields,
  type HashReply,
  type ScoredReply,
} from "./redis-records";
import { runScript, SCRIPTS, type Script } from "./redis-script-calls";

export type RedisStoreOptions = {
  /** Namespace of the keys, like a table name. @default "idempotency_records" */
  table?: string | undefined;
  /** Prepended to every key, e.g. "myapp:". No braces: they would change the hash slot. @default "" */
  keyPrefix?: string | undefined;
  /**
   * Scopes are spread over this many buckets; each bucket has its own hash slot and its own index
   * of running executions. Recovery reads every bucket, so keep it small; 256 spreads the load over
   * clusters of up to ~100 masters. Changing it on a live store orphans the records in flight.
   * @default 256
   */
  buckets?: number | undefined;
};

const TABLE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Every step is one Lua script (one round trip, atomic); every key of a scope carries the hash tag
 * of its bucket, so the scripts run unchanged on Redis Cluster. Records expire through Redis's own
 * TTL. What Redis loses on a crash (writes since the last fsync) is what this store loses: see
 * STORES.md before choosing it for payments.
 *
 * @example
 * const store = new RedisStore(new Redis(process.env.REDIS_URL));
 * const store = new RedisStore(new Redis.Cluster([{ host: "10.0.0.1", port: 6379 }]));
 * // node-redis, connected first: about half ioredis's CPU per command (see STORES.md)
 * const store = new RedisStore(await createClient({ url: process.env.REDIS_URL }).connect());
 */
export class RedisStore implements IdempotencyStore {
  readonly table: string;
  private readonly send: SendCommand;
  private readonly prefix: string;
  private readonly buckets: number;

  constructor(redis: RedisStoreClient, options: RedisStoreOptions = {}) {
    this.table = options.table ?? "idempotency_records";
    const keyPrefix = options.keyPrefix ?? "";
    if (!TABLE_NAME.test(this.table))
      throw new Error(`Invalid RedisStore table "${this.table}": letters, digits, "_", "." and "-" only.`);
    if (/[{}]/.test(keyPrefix))
      throw new Error(`Invalid RedisStore keyPrefix "${keyPrefix}": braces would move every key into one hash slot.`);
    this.buckets = options.buckets ?? 256;
    if (!Number.isInteger(this.buckets) || this.buckets < 1)
      throw new Error(`Invalid RedisStore buckets: ${this.buckets}.`);
    this.prefix = keyPrefix;
    this.send = commandSender(redis);
  }

  async create({ scope, requestHash, ttlMs, token }: CreateInput): Promise<CreateResult> {
    const k = this.keys(scope);
    const found = (await this.run(
      SCRIPTS.create,
      3,
      k.record,
      k.index,
      k.steps,
      sized(token),
      sized(requestHash),
      lifetime(ttlMs),
    )) as 1 | string | Fields | [1, ...string[]];
    if (found === 1) return { status: "CREATED", steps: {} };
    if (typeof found === "string") return { status: "DUPLICATE", record: parseRecord(scope, found) };
    if (found[0] === 1) return { status: "CREATED", steps: fromPairs(found.slice(1) as string[]) };
    return { status: "DUPLICATE", record: fromFields(scope, found) };
  }

  async get(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const k = this.keys(scope);
    const [found, steps] = await Promise.all([
      (this.send(k.record, "GET", [k.record]) as Promise<string | null>).catch((err: Error) => {
        if (!err.message.startsWith("WRONGTYPE")) throw err;
        const fields = ["requestHash", "status", "response", "token", "expiresAt", "updatedAt"];
        return this.send(k.record, "HMGET", [k.record, ...fields]) as Promise<Fields>;
      }),
      this.send(k.steps, "HGETALL", [k.steps]) as Promise<HashReply>,
    ]);
    if (found === null) return undefined;
    const record = typeof found === "string" ? parseRecord(scope, found) : fromFields(scope, found);
    const { "": stepsHash, ...results } = hashOf(steps);
    return { ...record, steps: stepsHash === record.requestHash ? results : {} };
  }

  async markStep(
    scope: IdempotencyScope,
    token: string,
    name: string,
    result: string,
    ttlMs: number,
  ): Promise<boolean> {
    const k = this.keys(scope);
    return (await this.run(SCRIPTS.markStep, 2, k.record, k.steps, sized(token), name, result, lifetime(ttlMs))) === 1;
  }

  markSuccess(scope: IdempotencyScope, token: string, response: string | null, ttlMs: number): Promise<boolean> {
    return this.mark(scope, token, "S", ttlMs, response);
  }

  markFailed(scope: IdempotencyScope, token: string, ttlMs: number, response: string | null = null): Promise<boolean> {
    return this.mark(scope, token, "F", ttlMs, response);
  }

  /** A null response is sent as no 4th argument, which the script stores as no response (read back as null). */
  private async mark(
    scope: IdempotencyScope,
    token: string,
    outcome: "S" | "F",
    ttlMs: number,
    response: string | null,
  ): Promise<boolean> {
    const k = this.keys(scope);
    const marked =
      response === null
        ? await this.run(SCRIPTS.mark, 2, k.record, k.index, sized(token), outcome, lifetime(ttlMs))
        : await this.run(SCRIPTS.mark, 2, k.record, k.index, sized(token), outcome, lifetime(ttlMs), response);
    return marked === 1;
  }

  async release(scope: IdempotencyScope, token: string): Promise<boolean> {
    const k = this.keys(scope);
    return (await this.run(SCRIPTS.release, 2, k.record, k.index, sized(token))) === 1;
  }

  async heartbeat(scope: IdempotencyScope, token: string, ttlMs = 0): Promise<boolean> {
    const k = this.keys(scope);
    return (await this.run(SCRIPTS.heartbeat, 2, k.record, k.index, sized(token), Math.ceil(ttlMs))) === 1;
  }

  async incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number> {
    return (await this.run(SCRIPTS.increment, 1, this.keys(scope).counter, lifetime(ttlMs))) as number;
  }

  /**
   * Two steps. First, read each bucket's index for the oldest heartbeats before the cutoff (on a
   * cluster, each master answers for the buckets it holds); then take the `limit` oldest of all,
   * each in one atomic script that re-checks it, so two concurrent runs never take one record.
   * Cost: one small read per bucket plus at most `limit` scripts, whatever the number of records.
   */
  async recoverStuckRecords({ olderThanMs, limit, maxRetries, ttlMs }: RecoverInput): Promise<RecoveredRecord[]> {
    if (limit <= 0) return [];
    const [seconds, micros] = (await this.send(undefined, "TIME", [])) as [string, string];
    const cutoff = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - olderThanMs;
    const perBucket = await Promise.all(
      Array.from({ length: this.buckets }, (_, bucket) => {
        const index = this.indexKey(bucket);
        const range = [index, "-inf", `(${cutoff}`, "WITHSCORES", "LIMIT", 0, limit];
        return this.send(index, "ZRANGEBYSCORE", range) as Promise<ScoredReply>;
      }),
    );
    const candidates = perBucket
      .flatMap((reply) => scoredMembers(reply).map(([member, heartbeat]) => ({ member, heartbeat })))
      .sort((a, b) => a.heartbeat - b.heartbeat)
      .slice(0, limit);
    const taken = await Promise.all(
      candidates.map(async ({ member }) => {
        const scope = fromMember(member);
        const k = this.keys(scope);
        const retryCount = (await this.run(
          SCRIPTS.recover,
          3,
          k.record,
          k.counter,
          k.index,
          member,
          olderThanMs,
          maxRetries,
          lifetime(ttlMs),
        )) as number | null;
        return retryCount === null ? [] : [{ ...scope, retryCount, poisoned: retryCount >= maxRetries }];
      }),
    );
    return taken.flat();
  }

  /** Nothing to do: Redis deletes each record and counter itself when its TTL ends, and never returns an expired one. */
  cleanupExpiredRecords(): Promise<number> {
    return Promise.resolve(0);
  }

  /** The keys of one scope; the `{table:bucket}` hash tag puts all four in one slot. */
  private keys(scope: IdempotencyScope) {
    const member = JSON.stringify([scope.operation, scope.userId, scope.key]);
    const bucket = fnv1a(member) % this.buckets;
    const tag = `${this.prefix}{${this.table}:${bucket}}`;
    return {
      record: `${tag}:r:${member}`,
      counter: `${tag}:n:${member}`,
      steps: `${tag}:s:${member}`,
      index: `${tag}:processing`,
    };
  }

  private run(script: Script, numberOfKeys: number, ...keysAndArgs: Array<string | number>): Promise<unknown> {
    return runScript(this.send, script, numberOfKeys, ...keysAndArgs);
  }

  private indexKey(bucket: number): string {
    return `${this.prefix}{${this.table}:${bucket}}:processing`;
  }
}

/** PEXPIRE takes whole milliseconds, and 0 would delete the key at once; a record's expiresAt has 16 digits. */
function lifetime(ttlMs: number): number {
  if (!(ttlMs <= MAX_TTL_MS)) throw new RangeError(`Invalid RedisStore ttlMs: ${ttlMs} (at most ${MAX_TTL_MS}).`);
  return Math.max(1, Math.ceil(ttlMs));
}

/** About 31,700 years: any longer would not fit the record's 16-digit expiresAt. */
const MAX_TTL_MS = 1e15;

/** A token or request hash as the record holds it, its length first: what the fence of every script compares. */
function sized(value: string): string {
  return `${value.length}:${value}`;
}

/** 32-bit FNV-1a over UTF-16 code units: stable, so a scope keeps its bucket across restarts and versions. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
