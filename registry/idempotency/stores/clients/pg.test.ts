// The maintenance lock on real PostgreSQL sessions: on PGlite (embedded), and with DATABASE_URL two instances on one pg Pool.
import { PGlite } from "@electric-sql/pglite";
import { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "../../handler";
import { runMaintenanceOnce } from "../../maintenance";
import { postgresSchemaStatements } from "../postgres-schema";
import { PostgresStore } from "../postgres-store";

describe("maintenance on PostgreSQL", () => {
  let db: PGlite;
  let handler: IdempotencyHandler;

  beforeAll(async () => {
    db = new PGlite();
    for (const statement of postgresSchemaStatements()) await db.query(statement);
    handler = new IdempotencyHandler(new PostgresStore(db), undefined, { ttlMs: 1 });
  }, 30_000); // PGlite's first start can take several seconds on a busy CI runner.
  afterAll(() => db.close());

  it("takes and releases the advisory lock around each job, and cleans in batches", async () => {
    for (let i = 0; i < 5; i++)
      await handler.execute({ operation: "op", userId: "u", key: `b${i}`, payload: {} }, () => i);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await runMaintenanceOnce("cleanup", handler, db, { cleanupLimit: 2 })).toEqual({
      job: "cleanup",
      ran: true,
      deleted: 5,
    });
    expect(await runMaintenanceOnce("recover", handler, db)).toEqual({
      job: "recover",
      ran: true,
      released: 0,
      poisoned: 0,
    });
    const { rows } = await db.query("SELECT count(*)::int AS held FROM pg_locks WHERE locktype = 'advisory'");
    expect(rows).toEqual([{ held: 0 }]);
  });

  const url = process.env.DATABASE_URL;
  it.skipIf(!url)("[DATABASE_URL] of two instances on one PostgreSQL, only the one holding the lock runs", async () => {
    const pool = new Pool({ connectionString: url });
    const holder = await pool.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtext('idempotency-maintenance:cleanup'))");
      expect(await runMaintenanceOnce("cleanup", handler, pool)).toEqual({ job: "cleanup", ran: false });
      await holder.query("SELECT pg_advisory_unlock(hashtext('idempotency-maintenance:cleanup'))");
      expect(await runMaintenanceOnce("cleanup", handler, pool)).toMatchObject({ job: "cleanup", ran: true });
    } finally {
      holder.release();
      await pool.end();
    }
  });
});
