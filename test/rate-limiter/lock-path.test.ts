// The lock-path recipe: a limiter keyed by user + Idempotency-Key in front of the idempotency middleware
// caps how many idempotency store creates one key's retry storm causes, counted at the database.
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idempotency } from "@/blocks/idempotency/adapters/express";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { createFunctionName, dropStatements } from "@/blocks/idempotency/stores/postgres-schema";
import { PostgresStore, type SqlClient } from "@/blocks/idempotency/stores/postgres-store";
import { rateLimit } from "@/blocks/rate-limiter/adapters/express";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { MemoryRateLimitStore } from "@/blocks/rate-limiter/stores/memory-store";
import { databaseUrl, openPool, uniqueName } from "./support/stores";

const LIMIT = 5;
const RETRIES = 200;
const WAVE = 20;

/** Counts the store creates that reach the database (each is one call of the table's create function). */
function countingClient(client: SqlClient, table: string): SqlClient & { inserts: number } {
  const counting = {
    inserts: 0,
    query(text: string, params?: unknown[]) {
      // Every create reaches PostgreSQL as one call of the store's create function.
      if (text.includes(`FROM ${createFunctionName(table)}(`)) counting.inserts++;
      return client.query(text, params);
    },
  };
  return counting;
}

async function openDatabase(): Promise<{ client: SqlClient; close(): Promise<void> }> {
  if (databaseUrl) {
    const pool = await openPool(undefined, 10);
    return { client: pool, close: () => pool.end() };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const db = new PGlite();
  return { client: db, close: () => db.close() };
}

describe(`lock-path recipe on ${databaseUrl ? "PostgreSQL (DATABASE_URL)" : "PGlite"}`, { timeout: 60_000 }, () => {
  let database: { client: SqlClient; close(): Promise<void> };
  const tables: string[] = [];
  beforeAll(async () => {
    database = await openDatabase();
  }, 120_000);
  afterAll(async () => {
    for (const statement of tables.flatMap(dropStatements)) await database.client.query(statement);
    await database.close();
  });

  /** An app with a payment route behind the idempotency block, optionally behind the lock-path limiter. */
  async function storm(withLimiter: boolean) {
    const table = uniqueName("idem_lock");
    tables.push(table);
    const client = countingClient(database.client, table);
    const store = new PostgresStore(client, { table });
    await store.createSchema();
    let creates = 0;
    const create = store.create.bind(store);
    store.create = (input) => {
      creates++;
      return create(input);
    };
    const handler = new IdempotencyHandler(store);
    const lockPath = new RateLimiter(new MemoryRateLimitStore(), {
      name: "idempotency-key",
      limit: LIMIT,
      windowMs: 60_000,
    });
    let charges = 0;

    const app = express();
    app.use((req, _res, next) => {
      (req as { user?: { id: string } }).user = { id: "u_1" };
      next();
    });
    const guards = withLimiter ? [rateLimit(lockPath, { keyBy: "idempotencyKey" })] : [];
    app.post("/payments", ...guards, express.json(), idempotency(handler), (_req, res) => {
      charges++;
      res.status(201).json({ id: "ch_1" });
    });
    const server = app.listen(0);
    await new Promise((resolve) => server.once("listening", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/payments`;

    const statuses: number[] = [];
    try {
      for (let sent = 0; sent < RETRIES; sent += WAVE) {
        const wave = Array.from({ length: WAVE }, () =>
          fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": "retry-storm-1" },
            body: '{"amount":100}',
          }),
        );
        for (const res of await Promise.all(wave)) {
          statuses.push(res.status);
          await res.arrayBuffer();
        }
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    return { creates, inserts: client.inserts, charges, refused: statuses.filter((s) => s === 429).length };
  }

  it(`${RETRIES} rapid retries of one key cause at most ${LIMIT} store creates`, async () => {
    const { creates, inserts, charges, refused } = await storm(true);
    expect(creates).toBeLessThanOrEqual(LIMIT);
    expect(inserts).toBeLessThanOrEqual(LIMIT);
    expect(inserts).toBeGreaterThanOrEqual(1);
    expect(refused).toBe(RETRIES - LIMIT);
    expect(charges).toBe(1);
  });

  it(`without the limiter, the same storm reaches the store's create ${RETRIES} times`, async () => {
    const { creates, inserts, charges } = await storm(false);
    expect(creates).toBe(RETRIES);
    expect(inserts).toBeGreaterThanOrEqual(RETRIES);
    expect(charges).toBe(1);
  });
});
