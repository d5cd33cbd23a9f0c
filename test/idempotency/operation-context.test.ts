// The one context argument: what `execute`, `executeInTransaction` and a wrapper route's `run` receive.
import { PGlite } from "@electric-sql/pglite";
import express from "express";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { idempotent } from "@/blocks/idempotency/adapters/express";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import type { RouteContext } from "@/blocks/idempotency/http/route-options";
import type { OperationContext } from "@/blocks/idempotency/operation-context";
import { pgliteClient } from "@/blocks/idempotency/testing/pglite";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { dropTables, SERVICE_START_TIMEOUT_MS, uniqueTableName } from "./support/services";

const scope = (key: string) => ({ operation: "payments:create", userId: "u_1", key, payload: { amount: 100 } });

/** Counts the AbortControllers made while `work` runs: a context must make one only when its signal is read. */
async function countingControllers<T>(work: () => Promise<T>): Promise<{ made: number; result: T }> {
  let made = 0;
  const Original = globalThis.AbortController;
  vi.stubGlobal(
    "AbortController",
    class extends Original {
      constructor() {
        super();
        made++;
      }
    },
  );
  try {
    return { result: await work(), made };
  } finally {
    vi.unstubAllGlobals();
  }
}

describe("execute(scope, async (ctx) => ...)", () => {
  it("hands the operation its scope as ctx.key, and makes no AbortController unless ctx.signal is read", async () => {
    const handler = new IdempotencyHandler(new MemoryStore());
    let seen: OperationContext | undefined;
    const { made } = await countingControllers(() => handler.execute(scope("k-1"), (ctx) => ((seen = ctx), "ok")));
    expect(made).toBe(0);
    expect(seen?.key).toEqual({ operation: "payments:create", userId: "u_1", key: "k-1" });
    const read = await countingControllers(() => handler.execute(scope("k-2"), (ctx) => ctx.signal.aborted));
    expect(read).toMatchObject({ made: 1, result: { response: false, replayed: false } });
  });
});

describe("executeInTransaction(scope, async ({ tx }) => ...) (PGlite)", () => {
  let db: PGlite;
  let table: string;
  beforeAll(async () => {
    db = new PGlite();
    await db.waitReady;
  }, SERVICE_START_TIMEOUT_MS);
  afterAll(async () => db.close());
  afterEach(async () => dropTables(db, table));

  it("hands the operation ctx.tx and ctx.key; the signal is made only if read, and aborts at timeoutMs", async () => {
    table = uniqueTableName("ctx_tx");
    const store = new PostgresStore(pgliteClient(db), { table });
    await store.createSchema();
    const handler = new IdempotencyHandler(store);
    const { made, result } = await countingControllers(() =>
      handler.executeInTransaction(scope("k-1"), async ({ tx, key }) => ({
        one: (await tx.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one,
        key: key.key,
      })),
    );
    expect(made).toBe(0);
    expect(result.response).toEqual({ one: 1, key: "k-1" });

    let signal: AbortSignal | undefined;
    const timedOut = handler.executeInTransaction(
      scope("k-2"),
      async (ctx) => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        signal = ctx.signal; // Read only after the deadline passed: it is already aborted.
        return "late";
      },
      { timeoutMs: 20 },
    );
    await expect(timedOut).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await vi.waitFor(() => expect(signal?.aborted).toBe(true));
  });
});

describe("run(req, ctx) over HTTP (Express)", () => {
  it("gets the context last: the request's scope as ctx.key, and undefined when the request had no key", async () => {
    const seen: RouteContext[] = [];
    const app = express();
    app.post(
      "/payments",
      express.json(),
      idempotent(new IdempotencyHandler(new MemoryStore()), {
        getUserId: () => "u_1",
        run: (_req, ctx) => (seen.push(ctx), { status: 201, body: { aborted: ctx.signal.aborted } }),
      }),
    );
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/payments`;
    try {
      const keyed = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": "k-1" },
        body: "{}",
      });
      expect(keyed.status).toBe(201);
      expect(await keyed.json()).toEqual({ aborted: false });
      await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(seen.map((ctx) => ctx.key)).toEqual([
        { operation: "POST /payments", userId: "u_1", key: "k-1" },
        undefined,
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
