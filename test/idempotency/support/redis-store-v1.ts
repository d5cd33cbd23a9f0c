// What an instance of the hash-layout RedisStore (before the string layout) sends: the frozen
// scripts with the arguments that version passed, on one bucket, so keys match a RedisStore with `buckets: 1`.
import type { Cluster, Redis } from "ioredis";
import type {
  CreateResult,
  IdempotencyRecord,
  IdempotencyScope,
  IdempotencyStore,
  RecoveredRecord,
} from "@/blocks/idempotency/types";
import * as V1 from "../fixtures/redis-store-v1-scripts";

type Fields = Array<string | null>;

export function redisStoreV1(redis: Redis | Cluster, prefix: string): IdempotencyStore {
  const keys = (scope: IdempotencyScope) => {
    const member = JSON.stringify([scope.operation, scope.userId, scope.key]);
    const tag = `${prefix}{idempotency_records:0}`;
    return {
      member,
      record: `${tag}:r:${member}`,
      counter: `${tag}:n:${member}`,
      steps: `${tag}:s:${member}`,
      index: `${tag}:processing`,
    };
  };
  const run = (lua: string, numberOfKeys: number, ...keysAndArgs: Array<string | number>) =>
    redis.eval(lua, numberOfKeys, ...keysAndArgs);
  const toRecord = (
    scope: IdempotencyScope,
    [requestHash, status, response, token, expiresAt, updatedAt]: Fields,
  ): IdempotencyRecord => ({
    ...scope,
    requestHash: requestHash as string,
    status: status as IdempotencyRecord["status"],
    response: response ?? null,
    token: token as string,
    expiresAt: new Date(Number(expiresAt)),
    updatedAt: new Date(Number(updatedAt)),
  });
  const mark = async (
    scope: IdempotencyScope,
    token: string,
    outcome: string,
    ttlMs: number,
    response: string | null | undefined,
  ) => {
    const k = keys(scope);
    const args = [k.record, k.index, token, outcome, ttlMs, k.member, ...(response == null ? [] : [response])];
    return (await run(V1.MARK, 2, ...args)) === 1;
  };
  return {
    table: "idempotency_records",
    async create({ scope, requestHash, ttlMs, token }): Promise<CreateResult> {
      const k = keys(scope);
      const found = (await run(V1.CREATE, 3, k.record, k.index, k.steps, k.member, requestHash, token, ttlMs)) as
        Fields | [1, ...string[]];
      if (found[0] !== 1) return { status: "DUPLICATE", record: toRecord(scope, found as Fields) };
      const pairs = found.slice(1) as string[];
      return {
        status: "CREATED",
        steps: Object.fromEntries(pairs.flatMap((name, i) => (i % 2 ? [] : [[name, pairs[i + 1] as string]]))),
      };
    },
    async get(scope) {
      const k = keys(scope);
      const found = (await redis.hmget(
        k.record,
        "requestHash",
        "status",
        "response",
        "token",
        "expiresAt",
        "updatedAt",
      )) as Fields;
      return found[1] ? { ...toRecord(scope, found), steps: {} } : undefined;
    },
    markSuccess: (scope, token, response, ttlMs) => mark(scope, token, "SUCCESS", ttlMs, response),
    markFailed: (scope, token, ttlMs, response) => mark(scope, token, "FAILED", ttlMs, response),
    release: async (scope, token) =>
      (await run(V1.RELEASE, 2, keys(scope).record, keys(scope).index, token, keys(scope).member)) === 1,
    markStep: async (scope, token, name, result, ttlMs) =>
      (await run(V1.MARK_STEP, 2, keys(scope).record, keys(scope).steps, token, name, result, ttlMs)) === 1,
    incrementRetryCount: async (scope, ttlMs) => (await run(V1.INCREMENT, 1, keys(scope).counter, ttlMs)) as number,
    heartbeat: async (scope, token, ttlMs = 0) =>
      (await run(V1.HEARTBEAT, 2, keys(scope).record, keys(scope).index, token, ttlMs, keys(scope).member)) === 1,
    async recoverStuckRecords({ olderThanMs, limit, maxRetries, ttlMs }) {
      const index = keys({ operation: "", userId: "", key: "" }).index;
      const members = await redis.zrange(index, 0, limit - 1);
      const taken: RecoveredRecord[] = [];
      for (const member of members) {
        const [operation, userId, key] = JSON.parse(member) as [string, string, string];
        const k = keys({ operation, userId, key });
        const retryCount = (await run(
          V1.RECOVER,
          3,
          k.record,
          k.counter,
          k.index,
          member,
          olderThanMs,
          maxRetries,
          ttlMs,
        )) as number | null;
        if (retryCount !== null) taken.push({ operation, userId, key, retryCount, poisoned: retryCount >= maxRetries });
      }
      return taken;
    },
    cleanupExpiredRecords: () => Promise.resolve(0),
  };
}
