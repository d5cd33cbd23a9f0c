// The IdempotencyStore contract, written once and run against every store implementation.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { IdempotencyScope, IdempotencyStore } from "@/blocks/idempotency/types";
import { SERVICE_START_TIMEOUT_MS, SUITE_TEST_TIMEOUT_MS } from "./services";
import type { StoreHarness, StoreKind } from "./store-harness";

const MINUTE = 60_000;
const TTL = 60 * MINUTE;

/** Registers the contract suite for one store implementation. */
export function describeStoreContract(kind: StoreKind): void {
  describe(`IdempotencyStore contract: ${kind.name}`, { timeout: SUITE_TEST_TIMEOUT_MS }, () => {
    let opened: Awaited<ReturnType<StoreKind["open"]>>;
    let harness: StoreHarness;
    let store: IdempotencyStore;
    let n = 0;
    const scope = (overrides: Partial<IdempotencyScope> = {}): IdempotencyScope => ({
      operation: "payments:create",
      userId: "u_1",
      key: `key-${++n}`,
      ...overrides,
    });
    const create = async (s: IdempotencyScope, requestHash = "hash-a", ttlMs = TTL) => {
      const token = randomUUID();
      const result = await store.create({ scope: s, requestHash, ttlMs, token });
      if (result.status !== "CREATED") throw new Error(`expected CREATED for ${s.key}, got ${result.status}`);
      return token;
    };

    beforeAll(async () => {
      opened = await kind.open();
    }, SERVICE_START_TIMEOUT_MS);
    afterAll(async () => opened.close());
    beforeEach(async () => {
      harness = await opened.fresh();
      store = harness.store;
    }, SUITE_TEST_TIMEOUT_MS);
    afterEach(async () => harness.close());

    describe("create", () => {
      it("creates a PROCESSING record, then reports the duplicate with the winning record", async () => {
        const s = scope();
        const token = await create(s);
        const second = await store.create({ scope: s, requestHash: "hash-b", ttlMs: TTL, token: randomUUID() });
        expect(second.status).toBe("DUPLICATE");
        if (second.status !== "DUPLICATE") return;
        expect(second.record).toMatchObject({
          ...s,
          requestHash: "hash-a",
          status: "PROCESSING",
          response: null,
          token,
        });
      });

      it("lets exactly one of 50 concurrent creates for one scope win", async () => {
        const s = scope();
        const results = await Promise.all(
          Array.from({ length: 50 }, () =>
            store.create({ scope: s, requestHash: "h", ttlMs: TTL, token: randomUUID() }),
          ),
        );
        expect(results.filter((r) => r.status === "CREATED")).toHaveLength(1);
        expect(results.filter((r) => r.status === "DUPLICATE")).toHaveLength(49);
      });

      it("keeps scopes independent: same key for another user or operation", async () => {
        const s = scope();
        await create(s);
        await create({ ...s, userId: "u_2" });
        await create({ ...s, operation: "refunds:create" });
      });

      it("keeps scopes apart that a case-folding or space-padding collation would merge", async () => {
        const s = scope({ key: "Key-A", userId: "alice" });
        await create(s);
        await create({ ...s, key: "key-a" });
        await create({ ...s, userId: "alice " });
        await create({ ...s, userId: "ALICE" });
        expect((await store.get({ ...s, userId: "ALICE" }))?.userId).toBe("ALICE");
      });

      it("treats an expired record as absent and hands the key to a new owner", async () => {
        const s = scope();
        const oldToken = await create(s);
        await harness.advanceTime(TTL + 1);
        expect(await store.get(s)).toBeUndefined();
        const newToken = await create(s, "hash-b");
        expect(newToken).not.toBe(oldToken);
        expect(await store.markSuccess(s, oldToken, '"late"', TTL)).toBe(false);
        expect(await store.get(s)).toMatchObject({ requestHash: "hash-b", status: "PROCESSING", token: newToken });
      });
    });

    describe("fenced marks", () => {
      it("stores a success only for the token holder, and keeps the response bytes exactly", async () => {
        const s = scope();
        const token = await create(s);
        const body = '{"zeta":1,"alpha":{"b":2,"a":1},"text":"caf\\u00e9 ☕"}';
        expect(await store.markSuccess(s, "00000000-0000-4000-8000-000000000000", body, TTL)).toBe(false);
        expect(await store.markSuccess(s, token, body, TTL)).toBe(true);
        const record = await store.get(s);
        expect(record).toMatchObject({ status: "SUCCESS", token });
        expect(record?.response).toBe(body);
      });

      it("never flips a completed record: a second mark, a fail, a release and a heartbeat all do nothing", async () => {
        const s = scope();
        const token = await create(s);
        await store.markSuccess(s, token, '"first"', TTL);
        expect(await store.markSuccess(s, token, '"second"', TTL)).toBe(false);
        expect(await store.markFailed(s, token, TTL)).toBe(false);
        expect(await store.release(s, token)).toBe(false);
        expect(await store.heartbeat(s, token)).toBe(false);
        expect(await store.get(s)).toMatchObject({ status: "SUCCESS", response: '"first"' });
      });

      it("marks FAILED only for the token holder", async () => {
        const s = scope();
        const token = await create(s);
        expect(await store.markFailed(s, "00000000-0000-4000-8000-000000000000", TTL)).toBe(false);
        expect(await store.markFailed(s, token, TTL)).toBe(true);
        expect(await store.get(s)).toMatchObject({ status: "FAILED" });
      });

      // Issue 12, point 13: a failed key keeps what the failed execution answered (e.g. its 402), bytes intact.
      it("keeps the failed response with a FAILED record, and none when none is given", async () => {
        const kept = '{"status":402,"body":"{\\"z\\":1,\\"a\\":2}"}';
        const withResponse = scope();
        await store.markFailed(withResponse, await create(withResponse), TTL, kept);
        expect(await store.get(withResponse)).toMatchObject({ status: "FAILED", response: kept });
        const without = scope();
        await store.markFailed(without, await create(without), TTL);
        expect(await store.get(without)).toMatchObject({ status: "FAILED", response: null });
      });

      it("releases (deletes) only for the token holder, after which the key can be created again", async () => {
        const s = scope();
        const token = await create(s);
        expect(await store.release(s, "00000000-0000-4000-8000-000000000000")).toBe(false);
        expect(await store.release(s, token)).toBe(true);
        expect(await store.get(s)).toBeUndefined();
        await create(s);
      });

      it("renews the lease on heartbeat only for the token holder", async () => {
        const s = scope();
        const token = await create(s);
        await harness.advanceTime(MINUTE);
        const before = (await store.get(s))?.updatedAt.getTime() ?? 0;
        expect(await store.heartbeat(s, "00000000-0000-4000-8000-000000000000")).toBe(false);
        expect(await store.heartbeat(s, token)).toBe(true);
        expect((await store.get(s))?.updatedAt.getTime()).toBeGreaterThan(before);
      });
    });

    describe("steps (markStep)", () => {
      const OTHER = "00000000-0000-4000-8000-000000000000";
      const stepsOf = async (s: IdempotencyScope, requestHash = "hash-a") => {
        const created = await store.create({ scope: s, requestHash, ttlMs: TTL, token: randomUUID() });
        if (created.status !== "CREATED") throw new Error(`expected CREATED, got ${created.status}`);
        // `undefined`: the store did not read them with create; then `get` must have them.
        return created.steps ?? (await store.get(s))?.steps;
      };

      it("records a step only for the PROCESSING record's token holder", async () => {
        const s = scope();
        const token = await create(s);
        expect(await store.markStep(s, OTHER, "charge", '{"id":"ch_1"}', TTL)).toBe(false);
        expect(await store.markStep(s, token, "charge", '{"id":"ch_1"}', TTL)).toBe(true);
        expect(await store.markStep(s, token, "receipt", "", TTL)).toBe(true);
        expect((await store.get(s))?.steps).toEqual({ charge: '{"id":"ch_1"}', receipt: "" });
        await store.markSuccess(s, token, '"done"', TTL);
        expect(await store.markStep(s, token, "late", "1", TTL)).toBe(false);
        expect(await store.markStep(scope(), token, "absent", "1", TTL)).toBe(false);
      });

      it("refuses a step after its record was released, and keeps the steps for the next attempt", async () => {
        const s = scope();
        const token = await create(s);
        const bytes = '{"zeta":1,"alpha":{"b":2,"a":1},"text":"caf\\u00e9 ☕"}';
        expect(await store.markStep(s, token, "charge", bytes, TTL)).toBe(true);
        await store.incrementRetryCount(s, TTL);
        expect(await store.release(s, token)).toBe(true);
        expect(await store.markStep(s, token, "receipt", "1", TTL)).toBe(false);
        expect(await stepsOf(s)).toEqual({ charge: bytes });
        expect(await store.incrementRetryCount(s, TTL)).toBe(2);
      });

      it("keeps the steps through crash recovery", async () => {
        const s = scope();
        const token = await create(s);
        await store.markStep(s, token, "charge", '"ch_1"', TTL);
        await harness.advanceTime(10 * MINUTE);
        await store.recoverStuckRecords({ olderThanMs: 5 * MINUTE, limit: 10, maxRetries: 3, ttlMs: TTL });
        expect(await store.markStep(s, token, "receipt", "1", TTL)).toBe(false);
        expect(await stepsOf(s)).toEqual({ charge: '"ch_1"' });
      });

      it("never hands one request's steps to another payload under the same key", async () => {
        const s = scope();
        const first = await create(s, "hash-a");
        await store.markStep(s, first, "charge", '"for a"', TTL);
        await store.release(s, first);
        expect(await stepsOf(s, "hash-b")).toEqual({});
        const tokenB = (await store.get(s))?.token ?? "";
        expect(await store.markStep(s, tokenB, "charge", '"for b"', TTL)).toBe(true);
        expect((await store.get(s))?.steps).toEqual({ charge: '"for b"' });
        await store.release(s, tokenB);
        expect(await stepsOf(s, "hash-a")).toEqual({});
      });

      it("gives a fresh key no steps, and keeps scopes apart", async () => {
        const s = scope();
        const token = await create(s);
        await store.markStep(s, token, "charge", "1", TTL);
        expect(await stepsOf({ ...s, userId: "u_2" })).toEqual({});
        expect(await stepsOf({ ...s, operation: "refunds:create" })).toEqual({});
      });

      it("expires the steps ttlMs after their last write", async () => {
        const s = scope();
        const token = await create(s, "hash-a", 10 * TTL);
        await store.markStep(s, token, "charge", "1", TTL);
        await harness.advanceTime(TTL / 2);
        await store.markStep(s, token, "receipt", "2", TTL);
        await harness.advanceTime(TTL / 2 + 1);
        expect((await store.get(s))?.steps).toEqual({ charge: "1", receipt: "2" });
        await store.release(s, token);
        await harness.advanceTime(TTL / 2);
        expect(await stepsOf(s)).toEqual({});
      });
    });

    describe("retry counter", () => {
      it("survives the release of the record it counts for", async () => {
        const s = scope();
        const first = await create(s);
        expect(await store.incrementRetryCount(s, TTL)).toBe(1);
        await store.release(s, first);
        const second = await create(s);
        expect(await store.incrementRetryCount(s, TTL)).toBe(2);
        await store.release(s, second);
        expect(await store.incrementRetryCount(s, TTL)).toBe(3);
      });

      it("counts per scope and starts again once expired", async () => {
        const s = scope();
        expect(await store.incrementRetryCount(s, TTL)).toBe(1);
        expect(await store.incrementRetryCount({ ...s, userId: "u_2" }, TTL)).toBe(1);
        await harness.advanceTime(TTL + 1);
        expect(await store.incrementRetryCount(s, TTL)).toBe(1);
      });
    });

    describe("recoverStuckRecords", () => {
      it("frees PROCESSING records past the timeout, counting each as a retry, and leaves fresh ones", async () => {
        const stuck = scope();
        const fresh = scope();
        const done = scope();
        await create(stuck);
        const doneToken = await create(done);
        await store.markSuccess(done, doneToken, '"ok"', TTL);
        await harness.advanceTime(10 * MINUTE);
        await create(fresh);
        const recovered = await store.recoverStuckRecords({
          olderThanMs: 5 * MINUTE,
          limit: 10,
          maxRetries: 3,
          ttlMs: TTL,
        });
        expect(recovered).toEqual([{ ...stuck, retryCount: 1, poisoned: false }]);
        expect(await store.get(stuck)).toBeUndefined();
        expect(await store.get(fresh)).toMatchObject({ status: "PROCESSING" });
        expect(await store.get(done)).toMatchObject({ status: "SUCCESS" });
      });

      it("poisons a key whose recovery spends the retry budget", async () => {
        const s = scope();
        await store.incrementRetryCount(s, TTL);
        await store.incrementRetryCount(s, TTL);
        await create(s);
        await harness.advanceTime(10 * MINUTE);
        const recovered = await store.recoverStuckRecords({
          olderThanMs: 5 * MINUTE,
          limit: 10,
          maxRetries: 3,
          ttlMs: TTL,
        });
        expect(recovered).toEqual([{ ...s, retryCount: 3, poisoned: true }]);
        expect(await store.get(s)).toMatchObject({ status: "FAILED" });
      });

      it("rejects the stale owner's late completion once recovered and re-created", async () => {
        const s = scope();
        const stale = await create(s);
        await harness.advanceTime(10 * MINUTE);
        await store.recoverStuckRecords({ olderThanMs: 5 * MINUTE, limit: 10, maxRetries: 3, ttlMs: TTL });
        const current = await create(s);
        expect(await store.markSuccess(s, current, '"new owner"', TTL)).toBe(true);
        expect(await store.markSuccess(s, stale, '"stale owner"', TTL)).toBe(false);
        expect(await store.markFailed(s, stale, TTL)).toBe(false);
        expect(await store.release(s, stale)).toBe(false);
        expect(await store.get(s)).toMatchObject({ status: "SUCCESS", response: '"new owner"', token: current });
      });

      it("touches at most `limit` records per call, and two concurrent runs never take the same record", async () => {
        for (let i = 0; i < 7; i++) await create(scope());
        await harness.advanceTime(10 * MINUTE);
        const input = { olderThanMs: 5 * MINUTE, limit: 3, maxRetries: 3, ttlMs: TTL };
        const [a, b] = await Promise.all([store.recoverStuckRecords(input), store.recoverStuckRecords(input)]);
        expect(a.length).toBeLessThanOrEqual(3);
        expect(b.length).toBeLessThanOrEqual(3);
        const keys = [...a, ...b].map((r) => r.key);
        expect(new Set(keys).size).toBe(keys.length);
        const rest = await store.recoverStuckRecords({ ...input, limit: 100 });
        expect(keys.length + rest.length).toBe(7);
      });
    });

    describe("cleanupExpiredRecords", () => {
      it.skipIf(kind.expiresByItself)(
        "deletes only expired records, at most `limit` per call, and expired retry counters",
        async () => {
          const expired = [scope(), scope(), scope()];
          for (const s of expired) {
            const token = await create(s);
            await store.markSuccess(s, token, '"ok"', TTL);
            await store.incrementRetryCount(s, TTL);
          }
          await harness.advanceTime(TTL + 1);
          const live = scope();
          await create(live);
          expect(await store.cleanupExpiredRecords({ limit: 2 })).toBe(2);
          expect(await store.cleanupExpiredRecords({ limit: 2 })).toBe(1);
          expect(await store.cleanupExpiredRecords({ limit: 2 })).toBe(0);
          expect(await store.get(live)).toMatchObject({ status: "PROCESSING" });
          for (const s of expired) expect(await store.incrementRetryCount(s, TTL)).toBe(1);
        },
      );

      it.runIf(kind.expiresByItself)(
        "leaves expiry to the backend: expired records and counters are gone for every read, and cleanup deletes nothing",
        async () => {
          const expired = [scope(), scope(), scope()];
          for (const s of expired) {
            const token = await create(s);
            await store.markSuccess(s, token, '"ok"', TTL);
            await store.incrementRetryCount(s, TTL);
          }
          await harness.advanceTime(TTL + 1);
          const live = scope();
          await create(live);
          expect(await store.cleanupExpiredRecords({ limit: 2 })).toBe(0);
          for (const s of expired) expect(await store.get(s)).toBeUndefined();
          expect(await store.get(live)).toMatchObject({ status: "PROCESSING" });
          for (const s of expired) expect(await store.incrementRetryCount(s, TTL)).toBe(1);
        },
      );
    });
  });
}
