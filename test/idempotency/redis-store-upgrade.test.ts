// A rolling deploy from the hash layout to the string layout: old instances (the frozen scripts) and
// new ones on the same keys never run an operation twice; an old one meeting a new record fails closed.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { outcome } from "@/blocks/idempotency/testing/deferred";
import type { IdempotencyScope, IdempotencyStore } from "@/blocks/idempotency/types";
import { redisUrl } from "./support/services";
import { freshRedisStore } from "./support/redis-store-harness";
import { redisStoreV1 } from "./support/redis-store-v1";

const MINUTE = 60_000;
const HASH = "3a1f0c6e";

describe.skipIf(!redisUrl)(
  "[REDIS_URL] RedisStore upgrade from the hash layout: old and new instances on the same keys",
  () => {
    let redis: Redis;
    let harness: ReturnType<typeof freshRedisStore>;
    let v1: IdempotencyStore;
    let scope: IdempotencyScope;
    const create = (store: IdempotencyStore, token: string, requestHash = HASH) =>
      store.create({ scope, requestHash, ttlMs: MINUTE, token });
    const handlerOn = (store: IdempotencyStore) =>
      new IdempotencyHandler(store, undefined, { logger: { error() {}, warn() {}, info() {} } as never });

    beforeAll(() => void (redis = new Redis(redisUrl as string, { maxRetriesPerRequest: 1 })));
    afterAll(() => redis?.disconnect());
    beforeEach(async (test) => {
      harness = freshRedisStore(redis, 1);
      v1 = redisStoreV1(redis, harness.prefix);
      scope = { operation: "payments:create", userId: "u_1", key: randomUUID() };
      test.onTestFinished(() => harness.close());
    });

    it("the frozen scripts still work on their own records (so what follows runs what old instances run)", async () => {
      const token = randomUUID();
      expect(await create(v1, token)).toEqual({ status: "CREATED", steps: {} });
      expect(await create(v1, randomUUID())).toMatchObject({
        status: "DUPLICATE",
        record: { status: "PROCESSING", token },
      });
      expect(await v1.markSuccess(scope, token, '{"id":1}', MINUTE)).toBe(true);
      expect(await create(v1, randomUUID())).toMatchObject({
        status: "DUPLICATE",
        record: { status: "SUCCESS", response: '{"id":1}' },
      });
    });

    it("an old instance meeting a record a new one wrote, running or completed, answers STORE_UNAVAILABLE and never runs the operation", async () => {
      let runs = 0;
      const completed = { ...scope, payload: { amount: 100 } };
      await handlerOn(harness.store).execute(completed, async () => ++runs);
      const running = { ...scope, key: randomUUID(), requestHash: HASH };
      const token = randomUUID();
      await harness.store.create({ scope: running, requestHash: HASH, ttlMs: MINUTE, token });

      const old = handlerOn(v1);
      expect(await outcome(old.execute(completed, async () => ++runs))).toMatchObject({
        ok: false,
        code: "STORE_UNAVAILABLE",
      });
      expect(await outcome(old.execute(running, async () => ++runs))).toMatchObject({
        ok: false,
        code: "STORE_UNAVAILABLE",
      });
      await expect(
        v1.create({ scope: running, requestHash: HASH, ttlMs: MINUTE, token: randomUUID() }),
      ).rejects.toThrow(/WRONGTYPE/);
      expect(runs).toBe(1);
      expect(await harness.store.get(running)).toMatchObject({ status: "PROCESSING", token });
      expect(await harness.store.markSuccess(running, token, null, MINUTE)).toBe(true);
    });

    it("old scripts never change a record a new instance holds, even with its token, and recovery on an old instance fails instead of taking it", async () => {
      const token = randomUUID();
      await create(harness.store, token);
      await harness.advanceTime(MINUTE / 2);
      const before = await harness.store.get(scope);
      for (const call of [
        v1.markSuccess(scope, token, "{}", MINUTE),
        v1.markFailed(scope, token, MINUTE, null),
        v1.release(scope, token),
        v1.heartbeat(scope, token, MINUTE),
        v1.markStep(scope, token, "charge", "{}", MINUTE),
        v1.get(scope),
        v1.recoverStuckRecords({ olderThanMs: 1000, limit: 10, maxRetries: 1, ttlMs: MINUTE }),
      ]) {
        await expect(call).rejects.toThrow(/WRONGTYPE/);
      }
      expect(await harness.store.get(scope)).toEqual(before);
      expect(await harness.store.markSuccess(scope, token, '{"id":1}', MINUTE)).toBe(true);
    });

    it("a new instance answers a record an old one wrote as a duplicate, running or completed, and replays the old instance's response", async () => {
      const token = randomUUID();
      await create(v1, token);
      const running = await create(harness.store, randomUUID());
      expect(running).toMatchObject({
        status: "DUPLICATE",
        record: { ...scope, status: "PROCESSING", token, requestHash: HASH, response: null },
      });
      expect(await harness.store.get(scope)).toEqual({ ...(running as { record: object }).record, steps: {} });
      await v1.markFailed(scope, token, MINUTE, null);
      expect(await create(harness.store, randomUUID())).toMatchObject({
        status: "DUPLICATE",
        record: { status: "FAILED", response: null },
      });

      let runs = 0;
      const context = { ...scope, key: randomUUID(), payload: { amount: 100 } };
      const first = await handlerOn(v1).execute(context, async () => ({ id: ++runs }));
      const replay = await handlerOn(harness.store).execute(context, async () => ({ id: ++runs }));
      expect(replay).toEqual({ response: first.response, replayed: true });
      expect(runs).toBe(1);
    });

    it("a new fence never acts on a record an old instance holds, even with its token, and the old instance still completes it", async () => {
      const token = randomUUID();
      await create(v1, token);
      const before = await v1.get(scope);
      expect(await harness.store.markSuccess(scope, token, "{}", MINUTE)).toBe(false);
      expect(await harness.store.markFailed(scope, token, MINUTE, null)).toBe(false);
      expect(await harness.store.release(scope, token)).toBe(false);
      expect(await harness.store.heartbeat(scope, token, MINUTE)).toBe(false);
      expect(await harness.store.markStep(scope, token, "charge", "{}", MINUTE)).toBe(false);
      expect(await v1.get(scope)).toEqual(before);
      expect(await v1.markSuccess(scope, token, '{"id":1}', MINUTE)).toBe(true);
      expect(await create(harness.store, randomUUID())).toMatchObject({
        status: "DUPLICATE",
        record: { status: "SUCCESS", response: '{"id":1}' },
      });
    });

    it("recovery on a new instance poisons or frees the stuck record of a crashed old instance, which old instances can still read", async () => {
      const other = { ...scope, key: randomUUID() };
      await create(v1, randomUUID());
      await harness.advanceTime(MINUTE / 2);
      expect(
        await harness.store.recoverStuckRecords({ olderThanMs: 1000, limit: 10, maxRetries: 1, ttlMs: MINUTE }),
      ).toEqual([{ ...scope, retryCount: 1, poisoned: true }]);
      expect(await v1.get(scope)).toMatchObject({ status: "FAILED" });

      await v1.create({ scope: other, requestHash: HASH, ttlMs: MINUTE, token: randomUUID() });
      await harness.advanceTime(MINUTE / 2);
      expect(
        await harness.store.recoverStuckRecords({ olderThanMs: 1000, limit: 10, maxRetries: 3, ttlMs: MINUTE }),
      ).toEqual([{ ...other, retryCount: 1, poisoned: false }]);
      expect(
        await harness.store.create({ scope: other, requestHash: HASH, ttlMs: MINUTE, token: randomUUID() }),
      ).toMatchObject({ status: "CREATED" });
    });

    it("steps recorded by either version reach the retry that runs on the other", async () => {
      const oldToken = randomUUID();
      await create(v1, oldToken);
      expect(await v1.markStep(scope, oldToken, "charge", '{"charge":"ch_1"}', MINUTE)).toBe(true);
      await v1.release(scope, oldToken);
      const newToken = randomUUID();
      expect(await create(harness.store, newToken)).toEqual({
        status: "CREATED",
        steps: { charge: '{"charge":"ch_1"}' },
      });

      expect(await harness.store.markStep(scope, newToken, "email", '"sent"', MINUTE)).toBe(true);
      await harness.store.release(scope, newToken);
      expect(await create(v1, randomUUID())).toEqual({
        status: "CREATED",
        steps: { charge: '{"charge":"ch_1"}', email: '"sent"' },
      });
    });
  },
);
