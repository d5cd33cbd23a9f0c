// `transaction: true` where it cannot be kept is refused by the types (@ts-expect-error below) and at start-up, never served.
import { PGlite } from "@electric-sql/pglite";
import Koa from "koa";
import { Controller, Module, Post } from "@nestjs/common";
import { APP_INTERCEPTOR, NestFactory } from "@nestjs/core";
import Fastify from "fastify";
import { createPool } from "mysql2/promise";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  idempotency as expressIdempotency,
  idempotent as expressIdempotent,
} from "@/blocks/idempotency/adapters/express";
import { idempotencyPlugin } from "@/blocks/idempotency/adapters/fastify";
import { idempotent as fetchIdempotent, withIdempotency } from "@/blocks/idempotency/adapters/fetch";
import { idempotency as honoIdempotency } from "@/blocks/idempotency/adapters/hono";
import { idempotency as koaIdempotency, idempotent as koaIdempotent } from "@/blocks/idempotency/adapters/koa";
import { IDEMPOTENCY_HANDLER, Idempotent, IdempotencyInterceptor } from "@/blocks/idempotency/adapters/nestjs";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { pgliteClient } from "@/blocks/idempotency/testing/pglite";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { MySqlStore } from "@/blocks/idempotency/stores/mysql-store";
import { SqliteStore, type SqliteClient } from "@/blocks/idempotency/stores/sqlite-store";
import { SERVICE_START_TIMEOUT_MS } from "../support/services";

const getUserId = () => "u_1";
const run = () => ({ status: 201, body: {} });
const capture = /cannot take `transaction: true`: it runs an ordinary route/;
const noTransactions = /`transaction: true` needs a handler whose store runs transactions/;

describe("transaction: true on a capture-style middleware, which cannot hand its route ctx.tx", () => {
  let db: PGlite;
  let handler: IdempotencyHandler<unknown>;
  beforeAll(async () => {
    db = new PGlite();
    await db.waitReady;
    handler = new IdempotencyHandler(new PostgresStore(pgliteClient(db)));
  }, SERVICE_START_TIMEOUT_MS);
  afterAll(async () => db.close());

  it("Express's and Hono's idempotency() refuse it when created", () => {
    // @ts-expect-error capture style takes no `transaction`
    expect(() => expressIdempotency(handler, { getUserId, transaction: true })).toThrow(capture);
    // @ts-expect-error capture style takes no `transaction`
    expect(() => honoIdempotency(handler, { getUserId, transaction: true })).toThrow(capture);
  });

  it("Koa's idempotency() refuses it when created (its options used to accept it)", () => {
    // @ts-expect-error capture style takes no `transaction`
    expect(() => koaIdempotency(handler, { getUserId, transaction: true })).toThrow(capture);
  });

  it("Fastify's plugin refuses a route that asks for it, as the route is declared", async () => {
    const app = Fastify();
    await app.register(idempotencyPlugin, { handler, getUserId });
    // Fastify's route `config` is not checked for excess properties, so only the start-up check catches this one.
    expect(() => app.post("/orders", { config: { idempotency: { transaction: true } } }, async () => ({}))).toThrow(
      capture,
    );
    await app.close();
  });
});

describe("transaction: true with a handler whose store has no transaction of the user's client", () => {
  const memory = new IdempotencyHandler(new MemoryStore());

  it("the wrapper styles refuse it by their types and when created (MemoryStore)", () => {
    // @ts-expect-error a MemoryStore handler has no transaction to hand `run`
    expect(() => expressIdempotent(memory, { getUserId, transaction: true, run })).toThrow(noTransactions);
    // @ts-expect-error a MemoryStore handler has no transaction to hand `run`
    expect(() => koaIdempotent(memory, { getUserId, transaction: true, run })).toThrow(noTransactions);
    expect(() =>
      // @ts-expect-error a MemoryStore handler has no transaction to hand `run`
      fetchIdempotent(memory, { getUserId, getOperation: () => "POST /orders", transaction: true, run }),
    ).toThrow(noTransactions);
    expect(() =>
      withIdempotency(
        memory,
        // @ts-expect-error a MemoryStore handler has no transaction to hand the route
        { getUserId, getOperation: () => "POST /orders", transaction: true },
        () => new Response(),
      ),
    ).toThrow(noTransactions);
  });

  it("a PostgresStore on a bare pg Pool (no adapter from stores/clients/) is refused too", async () => {
    const pool = new pg.Pool({ host: "127.0.0.1", port: 1 }); // Never connects: the refusal comes first.
    const bare = new IdempotencyHandler(new PostgresStore(pool));
    // @ts-expect-error a PostgresStore on a bare Pool has no transaction to hand `run`
    expect(() => expressIdempotent(bare, { getUserId, transaction: true, run })).toThrow(noTransactions);
    await pool.end();
  });

  it("executeInTransaction on such a store is refused by the same check as the routes: a TypeError naming the fix, not STORE_UNAVAILABLE", async () => {
    const pool = new pg.Pool({ host: "127.0.0.1", port: 1 }); // Never connects: the refusal comes first.
    const bare = new IdempotencyHandler(new PostgresStore(pool));
    const refused = bare.executeInTransaction(
      { operation: "orders:create", userId: "u_1", key: "k", payload: {} },
      () => "never",
    );
    await expect(refused).rejects.toThrow(
      /executeInTransaction needs a PostgresStore, MySqlStore or SqliteStore on a client adapter/,
    );
    await expect(
      memory.executeInTransaction({ operation: "orders:create", userId: "u_1", key: "k", payload: {} }, () => "never"),
    ).rejects.toBeInstanceOf(TypeError);
    await pool.end();
  });

  it("a MySqlStore on a bare mysql2 Pool, and a SqliteStore on a client without transaction(), are refused too", async () => {
    const pool = createPool({ host: "127.0.0.1", port: 1 }); // Never connects: the refusal comes first.
    const bareMySql = new IdempotencyHandler(new MySqlStore(pool));
    // @ts-expect-error a MySqlStore on a bare Pool has no transaction to hand `run`
    expect(() => expressIdempotent(bareMySql, { getUserId, transaction: true, run })).toThrow(noTransactions);
    await pool.end();
    const statementsOnly: SqliteClient = {
      execute: () => Promise.reject(new Error("unused")),
      batch: () => Promise.reject(new Error("unused")),
    };
    const bareSqlite = new IdempotencyHandler(new SqliteStore(statementsOnly));
    // @ts-expect-error a SqliteStore on a client without transaction() has nothing to hand `run`
    expect(() => koaIdempotent(bareSqlite, { getUserId, transaction: true, run })).toThrow(noTransactions);
  });

  it("NestJS: the app does not start when a route is marked transactional and the interceptor's handler cannot transact", async () => {
    @Controller("orders")
    class OrdersController {
      @Post()
      @Idempotent({ getUserId, transaction: true })
      create() {
        return {};
      }
    }
    @Module({
      controllers: [OrdersController],
      providers: [
        { provide: IDEMPOTENCY_HANDLER, useValue: memory },
        { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
      ],
    })
    class AppModule {}
    await expect(NestFactory.create(AppModule, { logger: false, abortOnError: false })).rejects.toThrow(noTransactions);
    // The refusal names the routes that asked, so an app knows which controller to mount on a transacting store.
    await expect(NestFactory.create(AppModule, { logger: false, abortOnError: false })).rejects.toThrow(
      /Marked `transaction: true`: .*OrdersController\.create/,
    );
  });
});

describe("transaction: true with requireKey: false", () => {
  it("is refused when the route is created: a request without a key would have neither record nor transaction", async () => {
    const db = new PGlite();
    try {
      const handler = new IdempotencyHandler(new PostgresStore(pgliteClient(db)));
      expect(() => expressIdempotent(handler, { getUserId, transaction: true, requireKey: false, run })).toThrow(
        /`requireKey: false`/,
      );
      expect(() => Idempotent({ getUserId, transaction: true, requireKey: false })).toThrow(/`requireKey: false`/);
      expect(() =>
        new Koa().use(koaIdempotent(handler, { getUserId, transaction: true, requireKey: false, run })),
      ).toThrow(/`requireKey: false`/);
    } finally {
      await db.close();
    }
  });
});

describe("transaction: true with waitMs", () => {
  it("is refused when the route is created: its duplicates already wait on the record's row lock", async () => {
    const db = new PGlite();
    try {
      const handler = new IdempotencyHandler(new PostgresStore(pgliteClient(db)));
      expect(() => expressIdempotent(handler, { getUserId, transaction: true, waitMs: 1_000, run })).toThrow(
        /`transaction: true` with `waitMs`/,
      );
      expect(() => Idempotent({ getUserId, transaction: true, waitMs: 1_000 })).toThrow(/`waitMs`/);
      expect(() => new Koa().use(koaIdempotent(handler, { getUserId, transaction: true, waitMs: 1_000, run }))).toThrow(
        /`waitMs`/,
      );
    } finally {
      await db.close();
    }
  });
});
