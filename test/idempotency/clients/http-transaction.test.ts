// `transaction: true` on the wrapper style of Express, Fastify and Hono: `run` gets the client's transaction, and its writes commit with the record.
import type { Server } from "node:http";
import { PGlite } from "@electric-sql/pglite";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { idempotent as expressIdempotent } from "@/blocks/idempotency/adapters/express";
import { idempotent as fastifyIdempotent } from "@/blocks/idempotency/adapters/fastify";
import { idempotent as honoIdempotent } from "@/blocks/idempotency/adapters/hono";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import type { RouteResult } from "@/blocks/idempotency/http/http-response";
import { pgliteClient, type PgliteTransaction as Transaction } from "@/blocks/idempotency/testing/pglite";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { dropTables, SERVICE_START_TIMEOUT_MS, uniqueTableName } from "../support/services";

type Post = (key: string, body: { amount: number }) => Promise<{ status: number; text: string }>;
/** The route's logic: an order row written on the transaction `run` was handed, then the answer. */
type Logic = (tx: Transaction, key: string, amount: number) => Promise<RouteResult>;
type App = { post: Post; close(): Promise<void> };

const frameworks: Record<string, (handler: IdempotencyHandler<Transaction>, logic: Logic) => Promise<App>> = {
  async express(handler, logic) {
    const app = express();
    app.post(
      "/orders",
      express.json(),
      expressIdempotent(handler, {
        getUserId: () => "u_1",
        transaction: true,
        run: (req, { tx }) => logic(tx, String(req.get("idempotency-key")), (req.body as { amount: number }).amount),
      }),
    );
    app.use(
      ((err, _req, res, _next) =>
        void res
          .status(500)
          .json({ error: { code: "ROUTE_ERROR", message: String(err) } })) as express.ErrorRequestHandler,
    );
    const server: Server = await new Promise((resolve) => {
      const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
    });
    const port = (server.address() as { port: number }).port;
    return {
      async post(key, body) {
        const res = await fetch(`http://127.0.0.1:${port}/orders`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify(body),
        });
        return { status: res.status, text: await res.text() };
      },
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  },
  async fastify(handler, logic) {
    const app = Fastify();
    app.post(
      "/orders",
      fastifyIdempotent(handler, {
        getUserId: () => "u_1",
        transaction: true,
        run: (request, _reply, { tx }) =>
          logic(tx, String(request.headers["idempotency-key"]), (request.body as { amount: number }).amount),
      }),
    );
    await app.ready();
    return {
      async post(key, body) {
        const res = await app.inject({
          method: "POST",
          url: "/orders",
          headers: { "idempotency-key": key },
          payload: body,
        });
        return { status: res.statusCode, text: res.body };
      },
      close: () => app.close(),
    };
  },
  async hono(handler, logic) {
    const app = new Hono();
    app.post(
      "/orders",
      honoIdempotent(handler, {
        getUserId: () => "u_1",
        transaction: true,
        run: async (c, { tx }) =>
          logic(tx, String(c.req.header("idempotency-key")), ((await c.req.json()) as { amount: number }).amount),
      }),
    );
    app.onError((err, c) => c.json({ error: { code: "ROUTE_ERROR", message: String(err) } }, 500));
    return {
      async post(key, body) {
        const res = await app.request("/orders", {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify(body),
        });
        return { status: res.status, text: await res.text() };
      },
      close: async () => {},
    };
  },
};

describe("transaction: true routes (PGlite)", () => {
  let db: PGlite;
  let table: string;
  let handler: IdempotencyHandler<Transaction>;
  let app: App | undefined;
  const orders = async (key: string) =>
    (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}_orders WHERE key = $1`, [key])).rows[0]?.n;

  beforeAll(async () => {
    db = new PGlite();
    await db.waitReady;
  }, SERVICE_START_TIMEOUT_MS);
  afterAll(async () => db.close());
  beforeEach(async () => {
    table = uniqueTableName("http_tx");
    const store = new PostgresStore(pgliteClient(db), { table });
    await store.createSchema();
    await db.query(`CREATE TABLE ${table}_orders (id SERIAL PRIMARY KEY, key TEXT NOT NULL, amount INT NOT NULL)`);
    handler = new IdempotencyHandler(store);
  });
  afterEach(async () => {
    await app?.close();
    await db.query(`DROP TABLE IF EXISTS ${table}_orders`);
    await dropTables(db, table);
  });

  const insertOrder = async (tx: Transaction, key: string, amount: number) => {
    const { rows } = await tx.query<{ id: number }>(
      `INSERT INTO ${table}_orders (key, amount) VALUES ($1, $2) RETURNING id`,
      [key, amount],
    );
    return rows[0]?.id;
  };

  for (const [name, start] of Object.entries(frameworks)) {
    it(`${name}: run writes on the transaction; the write and the record commit together, and a retry replays the bytes`, async () => {
      let runs = 0;
      app = await start(handler, async (tx, key, amount) => ({
        status: 201,
        body: { orderId: await insertOrder(tx, key, amount), amount, run: ++runs },
      }));
      const first = await app.post("o-1", { amount: 5 });
      expect(first.status).toBe(201);
      expect(await orders("o-1")).toBe(1);
      const retry = await app.post("o-1", { amount: 5 });
      expect(retry).toEqual({ status: 201, text: first.text });
      expect(runs).toBe(1);
      expect(await orders("o-1")).toBe(1);
    });

    it(`${name}: an error response or a thrown error rolls the route's writes back`, async () => {
      app = await start(handler, async (tx, key, amount) => {
        await insertOrder(tx, key, amount);
        if (amount > 100) return { status: 422, body: { error: "amount too large" } };
        throw new Error("payment provider down");
      });
      expect((await app.post("o-422", { amount: 500 })).status).toBe(422);
      expect(await orders("o-422")).toBe(0);
      expect((await app.post("o-500", { amount: 1 })).status).toBe(500);
      expect(await orders("o-500")).toBe(0);
      // 422 is permanent: the key is FAILED; the thrown error was transient: the key is free.
      expect((await app.post("o-422", { amount: 500 })).status).toBe(409);
      expect((await app.post("o-500", { amount: 1 })).status).toBe(500);
    });
  }
});
