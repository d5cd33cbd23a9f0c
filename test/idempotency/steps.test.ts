// ctx.step through the handler: replays after a transient failure and after a crash, fencing, misuse, the step key.
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { LeaseLostError } from "@/blocks/idempotency/execution";
import { UnstorableResultError } from "@/blocks/idempotency/result-json";
import { stepKeyOf } from "@/blocks/idempotency/steps";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { pgliteClient } from "@/blocks/idempotency/testing/pglite";
import { deferred, outcome } from "@/blocks/idempotency/testing/deferred";
import type { IdempotencyStore } from "@/blocks/idempotency/types";

const context = (key = "key-1", payload: unknown = { amount: 100 }) => ({
  operation: "payments:create",
  userId: "u_1",
  key,
  payload,
});
const quiet = { logger: { debug() {}, info() {}, warn() {}, error() {} }, heartbeatIntervalMs: 0 };

/** A MemoryStore on a clock the test moves, with some methods replaced and every call counted. */
function clockedStore(overrides: Partial<IdempotencyStore> = {}) {
  let offset = 0;
  const memory = new MemoryStore({ now: () => Date.now() + offset });
  const calls: string[] = [];
  const store = new Proxy(memory, {
    get(target, name, receiver) {
      const own = overrides[name as keyof IdempotencyStore] ?? Reflect.get(target, name, receiver);
      if (typeof own !== "function") return own;
      return (...args: unknown[]) => (
        calls.push(String(name)),
        (own as (...a: unknown[]) => unknown).apply(target, args)
      );
    },
  }) as IdempotencyStore;
  return { store, memory, calls, advance: (ms: number) => void (offset += ms) };
}

/** A downstream that dedupes by idempotency key, as a card processor does, and counts real effects. */
function processor() {
  const charges = new Map<string, { id: string }>();
  const effects: string[] = [];
  return {
    effects,
    charge(amount: number, idempotencyKey: string) {
      const known = charges.get(idempotencyKey);
      if (known) return known;
      const charge = { id: `ch_${charges.size + 1}` };
      charges.set(idempotencyKey, charge);
      effects.push(`charge ${amount}`);
      return charge;
    },
  };
}

describe("ctx.step", () => {
  it("replays completed steps after a transient failure and runs from the first incomplete one", async () => {
    const { store } = clockedStore();
    const handler = new IdempotencyHandler(store, undefined, quiet);
    const psp = processor();
    const calls = { charge: 0, receipt: 0 };
    let mailerDown = true;
    const pay = () =>
      handler.execute(context(), async ({ step }) => {
        const charge = await step("charge", (stepKey) => (calls.charge++, psp.charge(100, stepKey)));
        await step("receipt", () => {
          calls.receipt++;
          if (mailerDown) throw new Error("mailer unavailable");
        });
        return { paymentId: charge.id };
      });
    expect(await outcome(pay())).toMatchObject({ ok: false, error: { message: "mailer unavailable" } });
    mailerDown = false;
    expect(await pay()).toEqual({ response: { paymentId: "ch_1" }, replayed: false });
    expect(calls).toEqual({ charge: 1, receipt: 2 });
    expect(psp.effects).toEqual(["charge 100"]);
    expect(await pay()).toMatchObject({ response: { paymentId: "ch_1" }, replayed: true });
  });

  it("replays completed steps after a crash and recoverStuckRecords", async () => {
    const { store, advance } = clockedStore();
    const handler = new IdempotencyHandler(store, undefined, quiet);
    const psp = processor();
    const crashed = deferred();
    const first = handler.execute(context(), async ({ step }) => {
      await step("charge", (stepKey) => psp.charge(100, stepKey));
      crashed.resolve();
      return new Promise(() => {}); // the process died here: nothing more happens
    });
    void first;
    await crashed.promise;
    advance(10 * 60_000);
    expect(await handler.recoverStuckRecords({ timeoutInMs: 5 * 60_000 })).toEqual({ released: 1, poisoned: 0 });
    let charged = 0;
    const result = await handler.execute(context(), async ({ step }) => {
      const charge = await step("charge", (stepKey) => (charged++, psp.charge(100, stepKey)));
      const shipped = await step("ship", () => ({ shipment: `for ${charge.id}` }));
      return { charge, shipped };
    });
    expect(result.response).toEqual({ charge: { id: "ch_1" }, shipped: { shipment: "for ch_1" } });
    expect(charged).toBe(0);
    expect(psp.effects).toEqual(["charge 100"]);
  });

  it("never replays one payload's steps to another payload under the same key", async () => {
    const { store } = clockedStore();
    const handler = new IdempotencyHandler(store, undefined, quiet);
    const runs: number[] = [];
    const attempt = (amount: number, fail: boolean) =>
      handler.execute(context("key-1", { amount }), async ({ step }) => {
        const seen = await step("charge", () => (runs.push(amount), amount));
        if (fail) throw new Error("transient");
        return seen;
      });
    await outcome(attempt(100, true));
    expect((await attempt(200, false)).response).toBe(200);
    expect(runs).toEqual([100, 200]);
  });

  it("reads the steps with one get when the store's create does not return them", async () => {
    const { store, calls, memory } = clockedStore({});
    const stripped = new Proxy(store, {
      get: (target, name, receiver) =>
        name === "create"
          ? async (input: Parameters<IdempotencyStore["create"]>[0]) => {
              const created = await memory.create(input);
              return created.status === "CREATED" ? { status: "CREATED" as const } : created;
            }
          : Reflect.get(target, name, receiver),
    });
    const handler = new IdempotencyHandler(stripped, undefined, quiet);
    let fail = true;
    const run = () =>
      handler.execute(context(), async ({ step }) => {
        await step("one", () => 1);
        await step("two", () => 2);
        if (fail) throw new Error("transient");
        return "done";
      });
    await outcome(run());
    fail = false;
    calls.length = 0;
    let ones = 0;
    await handler.execute(context("key-2"), async ({ step }) => step("one", () => ++ones));
    expect(calls.filter((call) => call === "get")).toHaveLength(1);
    expect((await run()).response).toBe("done");
  });

  it("returns on the first run the value a replay will return (the result as JSON carries it)", async () => {
    const { store } = clockedStore();
    const handler = new IdempotencyHandler(store, undefined, quiet);
    const seen: unknown[] = [];
    let fail = true;
    const run = () =>
      handler.execute(context(), async ({ step }) => {
        seen.push(await step("when", () => ({ at: new Date(0), gone: undefined })));
        seen.push(await step("nothing", () => undefined));
        if (fail) throw new Error("transient");
        return null;
      });
    await outcome(run());
    fail = false;
    await run();
    expect(seen).toEqual([
      { at: "1970-01-01T00:00:00.000Z" },
      undefined,
      { at: "1970-01-01T00:00:00.000Z" },
      undefined,
    ]);
  });

  it("records nothing for a step whose fn throws: the next attempt calls it again with the same stepKey", async () => {
    const { store } = clockedStore();
    const handler = new IdempotencyHandler(store, undefined, quiet);
    const keys: string[] = [];
    let fail = true;
    const run = () =>
      handler.execute(context(), async ({ step }) =>
        step("charge", (stepKey) => {
          keys.push(stepKey);
          if (fail) throw new Error("processor timeout");
          return "ok";
        }),
      );
    await outcome(run());
    fail = false;
    expect((await run()).response).toBe("ok");
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
  });

  it("refuses a repeated step name and a bad one with a TypeError, before calling fn", async () => {
    const { store } = clockedStore();
    const handler = new IdempotencyHandler(store, undefined, quiet);
    let called = 0;
    const repeated = await outcome(
      handler.execute(context("k-repeat"), async ({ step }) => {
        await step("charge", () => ++called);
        return step("charge", () => ++called);
      }),
    );
    expect(repeated).toMatchObject({
      ok: false,
      error: { name: "TypeError", message: expect.stringMatching(/"charge" already ran/) },
    });
    expect(called).toBe(1);
    for (const name of ["", " padded", "x".repeat(101), "tab\there", "café", 42 as unknown as string]) {
      const bad = await outcome(
        handler.execute(context(`k-${String(name).length}-${Math.random()}`), async ({ step }) =>
          step(name, () => ++called),
        ),
      );
      expect(bad).toMatchObject({ ok: false, error: { name: "TypeError" } });
    }
    expect(called).toBe(1);
  });

  it("fails the key for good on a step result JSON cannot carry, recording nothing", async () => {
    const { store, memory } = clockedStore();
    const handler = new IdempotencyHandler(store, undefined, quiet);
    const result = await outcome(
      handler.execute(context(), async ({ step }) => step("ledger", () => ({ cents: 10n }))),
    );
    expect(result).toMatchObject({ ok: false, error: expect.any(UnstorableResultError) });
    expect((result as { error: Error }).error).toBeInstanceOf(TypeError);
    const record = await memory.get({ operation: "payments:create", userId: "u_1", key: "key-1" });
    expect(record).toMatchObject({ status: "FAILED", steps: {} });
  });

  it("fails the attempt transiently when the step cannot be recorded: the error propagates and the key is freed", async () => {
    let down = true;
    const { store, memory } = clockedStore({
      markStep: (...args) => (down ? Promise.reject(new Error("ECONNRESET")) : memory.markStep(...args)),
    });
    const handler = new IdempotencyHandler(store, undefined, quiet);
    const psp = processor();
    const run = () =>
      handler.execute(context(), async ({ step }) => step("charge", (stepKey) => psp.charge(100, stepKey)));
    expect(await outcome(run())).toMatchObject({ ok: false, error: { message: "ECONNRESET" } });
    down = false;
    expect((await run()).response).toEqual({ id: "ch_1" });
    // The step ran twice, under one stepKey: the processor charged once.
    expect(psp.effects).toEqual(["charge 100"]);
  });

  it("aborts on a lost lease: markStep answers false, the step rejects with LeaseLostError and ctx.signal aborts", async () => {
    const { store } = clockedStore({ markStep: async () => false });
    const handler = new IdempotencyHandler(store, undefined, quiet);
    let signal: AbortSignal | undefined;
    let after = 0;
    const result = await outcome(
      handler.execute(context(), async (ctx) => {
        signal = ctx.signal;
        await ctx.step("charge", () => "ch_1");
        return ctx.step("receipt", () => ++after);
      }),
    );
    expect(result).toMatchObject({ ok: false, error: expect.any(LeaseLostError) });
    expect(signal?.aborted).toBe(true);
    expect(after).toBe(0);
  });

  it("runs no step once the heartbeat found the lease lost", async () => {
    const { store, memory, advance } = clockedStore();
    const handler = new IdempotencyHandler(store, undefined, { ...quiet, heartbeatIntervalMs: 20 });
    const aborted = deferred();
    let called = 0;
    const first = handler.execute(context(), async ({ signal, step }) => {
      signal.addEventListener("abort", () => aborted.resolve());
      advance(10 * 60_000);
      await handler.recoverStuckRecords({ timeoutInMs: 5 * 60_000 });
      await memory.create({
        scope: { operation: "payments:create", userId: "u_1", key: "key-1" },
        requestHash: "other",
        ttlMs: 60_000,
        token: crypto.randomUUID(),
      });
      await aborted.promise;
      return step("charge", () => ++called);
    });
    expect(await outcome(first)).toMatchObject({ ok: false, error: expect.any(LeaseLostError) });
    expect(called).toBe(0);
  });

  it("derives a step key that is stable, distinct per operation, user, key and name, short, and opaque", () => {
    const scope = {
      operation: "payments:create",
      userId: "user-4711@example.com",
      key: "8f14e45f-ceea-467f-a0e6-0b2c5e3a1f00",
    };
    const key = stepKeyOf(scope, "charge");
    expect(stepKeyOf({ ...scope }, "charge")).toBe(key);
    const others = [
      stepKeyOf({ ...scope, operation: "refunds:create" }, "charge"),
      stepKeyOf({ ...scope, userId: "user-4712@example.com" }, "charge"),
      stepKeyOf({ ...scope, key: "8f14e45f-ceea-467f-a0e6-0b2c5e3a1f01" }, "charge"),
      stepKeyOf(scope, "receipt"),
      // Boundaries cannot shift between the parts.
      stepKeyOf({ operation: "payments:create", userId: "user-4711@example.com8f14e45f", key: "-ceea" }, "charge"),
    ];
    expect(new Set([key, ...others]).size).toBe(6);
    expect(key).toMatch(/^[\x21-\x7e]{1,255}$/);
    for (const part of ["user-4711", "example", "8f14e45f", "payments", "charge"]) expect(key).not.toContain(part);
  });
});

describe("ctx.step on PostgreSQL (PGlite)", () => {
  let db: PGlite;
  beforeAll(async () => {
    db = new PGlite();
    await db.waitReady;
  });
  afterAll(async () => db.close());

  it("costs a fresh key one round trip per step, and no read: create, two marks, the result", async () => {
    const statements: string[] = [];
    const client = {
      query: (text: string, params?: unknown[]) => (
        statements.push(text.trim().split(/\s+/).slice(0, 4).join(" ")),
        db.query(text, params)
      ),
    };
    const store = new PostgresStore(client, { table: "steps_round_trips" });
    await store.createSchema();
    statements.length = 0;
    const handler = new IdempotencyHandler(store, undefined, quiet);
    await handler.execute(context(), async ({ step }) => {
      await step("charge", () => "ch_1");
      await step("receipt", () => "sent");
      return "ok";
    });
    expect(statements).toHaveLength(4);
    expect(statements.filter((text) => text.startsWith("INSERT INTO steps_round_trips_retries"))).toHaveLength(2);
  });

  it("has no step in transactional mode", async () => {
    const store = new PostgresStore(pgliteClient(db), { table: "steps_transactional" });
    await store.createSchema();
    const handler = new IdempotencyHandler(store, undefined, quiet);
    const { response } = await handler.executeInTransaction(context(), async (ctx) => "step" in ctx);
    expect(response).toBe(false);
  });
});
