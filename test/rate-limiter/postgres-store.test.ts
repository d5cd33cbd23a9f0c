// PostgresRateLimitStore beyond the contract: one statement per decision, bounded cleanup, the schema module.
import { freePort } from "../support/free-port";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rateOf } from "@/blocks/rate-limiter/gcra";
import { RateLimiter } from "@/blocks/rate-limiter/limiter";
import { PostgresRateLimitStore, type SqlClient } from "@/blocks/rate-limiter/stores/postgres-store";
import {
  checkTableName,
  dropStatements,
  schemaStatements,
  schemaTables,
} from "@/blocks/rate-limiter/stores/postgres-schema";
import { recordingMetrics } from "@/blocks/rate-limiter/testing/recorders";
import { databaseUrl, openPool, uniqueName } from "./support/stores";

const databases: Array<{
  name: string;
  available: boolean;
  open(): Promise<{ client: SqlClient; close(): Promise<void> }>;
}> = [
  {
    name: "PGlite",
    available: true,
    async open() {
      const { PGlite } = await import("@electric-sql/pglite");
      const db = new PGlite();
      return { client: db, close: () => db.close() };
    },
  },
  {
    name: "[DATABASE_URL] PostgreSQL",
    available: Boolean(databaseUrl),
    async open() {
      const pool = await openPool(undefined, 2);
      return { client: pool, close: () => pool.end() };
    },
  },
];

for (const database of databases) {
  describe.skipIf(!database.available)(`PostgresRateLimitStore on ${database.name}`, { timeout: 60_000 }, () => {
    let client: SqlClient;
    let close: () => Promise<void>;
    let statements = 0;
    let store: PostgresRateLimitStore;
    beforeAll(async () => {
      ({ client, close } = await database.open());
      const counting: SqlClient = { query: (text, params) => (statements++, client.query(text, params)) };
      store = new PostgresRateLimitStore(counting, { table: uniqueName("rl") });
      await store.createSchema();
      await store.createSchema(); // twice is harmless
    }, 120_000);
    afterAll(async () => {
      for (const statement of dropStatements(store.table)) await client.query(statement);
      await close();
    });

    it("upgrades a table migrated with the millisecond column (tat_ms), and every key then gets its quota", async () => {
      const table = uniqueName("rl_old");
      await client.query(
        `CREATE UNLOGGED TABLE ${table} (key TEXT NOT NULL PRIMARY KEY, tat_ms BIGINT NOT NULL, allowed BOOLEAN NOT NULL)`,
      );
      await client.query(`CREATE INDEX ${table}_tat_ms_idx ON ${table} (tat_ms)`);
      await client.query(`INSERT INTO ${table} VALUES ('p:k', ${Date.now() + 60_000}, true)`);
      const upgraded = new PostgresRateLimitStore(client, { table });
      try {
        await upgraded.createSchema();
        const { rows } = await client.query(
          `SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY indexname`,
          [table],
        );
        expect((rows as Array<{ indexname: string }>).map((row) => row.indexname)).toEqual([
          `${table}_pkey`,
          `${table}_tat_us_idx`,
        ]);
        const limiter = new RateLimiter(upgraded, { name: "p", limit: 1, windowMs: 60_000 });
        expect((await limiter.check("k")).allowed).toBe(true);
        expect((await limiter.check("k")).allowed).toBe(false);
      } finally {
        for (const statement of dropStatements(table)) await client.query(statement);
      }
    });

    it("sends one statement per decision, allowed or refused", async () => {
      const rate = rateOf({ name: "p", limit: 2, windowMs: 60_000 });
      statements = 0;
      for (let i = 0; i < 4; i++) await store.take("one-statement", rate);
      expect(statements).toBe(4);
    });

    it("cleanup deletes only keys whose debt is paid, at most `limit` per call", async () => {
      const short = rateOf({ name: "p", limit: 1, windowMs: 50 });
      const long = rateOf({ name: "p", limit: 1, windowMs: 3_600_000 });
      for (const key of ["paid-1", "paid-2", "paid-3"]) await store.take(key, short);
      await store.take("owing", long);
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(await store.cleanup({ limit: 2 })).toBe(2);
      await store.cleanup();
      const { rows } = await client.query(
        `SELECT key FROM ${store.table} WHERE key IN ('paid-1', 'paid-2', 'paid-3', 'owing')`,
      );
      expect(rows).toEqual([{ key: "owing" }]);
      expect((await store.take("owing", long)).allowed).toBe(false);
    });
  });
}

describe("PostgreSQL down (nothing listens on the port)", () => {
  it("a pg Pool that cannot connect: the insurance limiter decides each request, and each store error is counted", async () => {
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ host: "127.0.0.1", port: await freePort(), connectionTimeoutMillis: 1_000 });
    const metrics = recordingMetrics();
    const limiter = new RateLimiter(new PostgresRateLimitStore(pool), { limit: 1, windowMs: 60_000, metrics });
    try {
      const decisions = [await limiter.check("u_1"), await limiter.check("u_1")];
      expect(decisions.map((d) => d.allowed)).toEqual([true, false]);
      expect(decisions[0]?.counted).toBe(true);
      expect(metrics.count("decisions", { policy: "default", outcome: "insurance_allowed" })).toBe(1);
      expect(metrics.count("storeErrors", { policy: "default", reason: "error" })).toBe(2);
    } finally {
      await pool.end();
    }
  });
});

describe("the schema module (what `blocks migrate` renders)", () => {
  it("names one table, checks names, and drops what it creates", () => {
    expect(schemaStatements()[0]).toMatch(
      /^DO \$\$ BEGIN\n {2}IF EXISTS \(SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass\(.rate_limits.\) AND attname = .tat_ms./,
    );
    expect(schemaStatements()[1]).toMatch(/^CREATE UNLOGGED TABLE IF NOT EXISTS rate_limits \(/);
    expect(schemaStatements("billing.rate_limits").join("\n")).toContain("billing.rate_limits (tat_us)");
    expect(schemaTables("rate_limits")).toEqual(["rate_limits"]);
    expect(dropStatements("rate_limits")).toEqual(["DROP TABLE IF EXISTS rate_limits"]);
    expect(() => checkTableName("rate_limits; DROP TABLE users")).toThrow(/Invalid rate-limit table name/);
    expect(() => schemaStatements("Rate")).toThrow();
  });
});

describe("keys of any size from clients", { timeout: 60_000 }, () => {
  it("a 10 kB key is counted like any other (hashed), never a store error that would fail open", async () => {
    const { PGlite } = await import("@electric-sql/pglite");
    const db = new PGlite();
    try {
      const store = new PostgresRateLimitStore(db, { table: uniqueName("rl") });
      await store.createSchema();
      const limiter = new RateLimiter(store, { limit: 1, windowMs: 60_000, onStoreError: "deny" });
      // Random, so PostgreSQL cannot compress it below its index's ~2.7 kB row limit.
      const huge = JSON.stringify(["POST /payments", "user:u_1", randomBytes(5_000).toString("hex")]);
      expect(await limiter.check(huge)).toMatchObject({ allowed: true, counted: true });
      expect(await limiter.check(huge)).toMatchObject({ allowed: false, counted: true });
      expect((await limiter.check(`${huge}x`)).allowed).toBe(true);
    } finally {
      await db.close();
    }
  });
});
