// Maintenance: both jobs run under an advisory lock, a held lock skips the run, timers never hold the process.
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { IdempotencyHandler } from "./handler";
import { runMaintenanceOnce, startMaintenance, type LockClient } from "./maintenance";
import { postgresSchemaStatements } from "./stores/postgres-schema";
import { PostgresStore } from "./stores/postgres-store";

describe("maintenance job", () => {
  let db: PGlite;
  let handler: IdempotencyHandler;

  beforeAll(async () => {
    db = new PGlite();
    for (const statement of postgresSchemaStatements()) await db.query(statement);
    handler = new IdempotencyHandler(new PostgresStore(db), undefined, { ttlMs: 1 });
  });
  afterAll(() => db.close());

  it("recovery and cleanup each run once and report what they did", async () => {
    await handler.execute({ operation: "op", userId: "u", key: "k1", payload: {} }, () => "done");
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await runMaintenanceOnce("cleanup", handler, db)).toEqual({ job: "cleanup", ran: true, deleted: 1 });
    expect(await runMaintenanceOnce("recover", handler, db)).toEqual({ job: "recover", ran: true, released: 0, poisoned: 0 });
  });

  it("cleans a backlog in bounded batches", async () => {
    for (let i = 0; i < 5; i++) await handler.execute({ operation: "op", userId: "u", key: `b${i}`, payload: {} }, () => i);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await runMaintenanceOnce("cleanup", handler, db, { cleanupLimit: 2 })).toMatchObject({ deleted: 5 });
  });

  it("skips the run when another instance holds the lock, and returns a pooled connection", async () => {
    const release = vi.fn();
    const busy: LockClient = {
      query: async () => ({ rows: [] }),
      connect: async () => ({ query: async () => ({ rows: [{ locked: false }] }), release }),
    };
    const cleanup = vi.spyOn(handler, "cleanupExpiredRecords");
    expect(await runMaintenanceOnce("cleanup", handler, busy)).toEqual({ job: "cleanup", ran: false });
    expect(cleanup).not.toHaveBeenCalled();
    expect(release).toHaveBeenCalledOnce();
  });

  it("runs on unref'd timers that stop cleanly", async () => {
    const recover = vi.spyOn(handler, "recoverStuckRecords");
    const maintenance = startMaintenance(handler, db, { recoverEveryMs: 10, cleanupEveryMs: 10_000 });
    await vi.waitFor(() => expect(recover).toHaveBeenCalled());
    maintenance.stop();
  });

  const url = process.env.DATABASE_URL;
  it.skipIf(!url)("[DATABASE_URL] of two instances on one PostgreSQL, only the one holding the lock runs", async () => {
    const pool = new pg.Pool({ connectionString: url });
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
