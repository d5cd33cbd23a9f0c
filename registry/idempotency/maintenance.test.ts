// Maintenance: both jobs run under an advisory lock, a held lock skips the run, timers never hold the process.
// It runs on MemoryStore and an in-memory lock, so it needs no database and no client: the lock's SQL on a real
// PostgreSQL runs in idempotency-setup.test.ts (on your client), and on pg in stores/clients/pg.test.ts.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { IdempotencyHandler } from "./handler";
import { runMaintenanceOnce, startMaintenance, type LockClient } from "./maintenance";
import { MemoryStore } from "./testing/memory-store";

/** Session advisory locks as PostgreSQL keeps them: `pg_try_advisory_lock` wins once per name until `pg_advisory_unlock`. */
function memoryLock(): LockClient & { held: Set<string> } {
  const held = new Set<string>();
  return {
    held,
    query(text, params = []) {
      // Like a driver: a statement it cannot run is a rejection.
      return new Promise((resolve) => resolve(answer(text, params)));
    },
  };

  function answer(text: string, params: unknown[]) {
    const name = String(params[0]);
    if (text.includes("pg_try_advisory_lock")) {
      const locked = !held.has(name);
      held.add(name);
      return { rows: [{ locked }] };
    }
    if (text.includes("pg_advisory_unlock")) return { rows: [{ pg_advisory_unlock: held.delete(name) }] };
    throw new Error(`memoryLock: unexpected statement ${text}`);
  }
}

describe("maintenance job", () => {
  let now: number;
  let handler: IdempotencyHandler;
  let lock: ReturnType<typeof memoryLock>;
  /** Records expire 1 ms after they complete; the fake clock moves past that without sleeping. */
  const expireAll = () => (now += 10);

  beforeEach(() => {
    now = Date.now();
    handler = new IdempotencyHandler(new MemoryStore({ now: () => now }), undefined, { ttlMs: 1 });
    lock = memoryLock();
  });

  it("recovery and cleanup each run once, report what they did, and release the lock", async () => {
    await handler.execute({ operation: "op", userId: "u", key: "k1", payload: {} }, () => "done");
    expireAll();
    expect(await runMaintenanceOnce("cleanup", handler, lock)).toEqual({ job: "cleanup", ran: true, deleted: 1 });
    expect(await runMaintenanceOnce("recover", handler, lock)).toEqual({
      job: "recover",
      ran: true,
      released: 0,
      poisoned: 0,
    });
    expect(lock.held.size).toBe(0);
  });

  it("cleans a backlog in bounded batches", async () => {
    for (let i = 0; i < 5; i++)
      await handler.execute({ operation: "op", userId: "u", key: `b${i}`, payload: {} }, () => i);
    expireAll();
    const cleanup = vi.spyOn(handler, "cleanupExpiredRecords");
    expect(await runMaintenanceOnce("cleanup", handler, lock, { cleanupLimit: 2 })).toMatchObject({ deleted: 5 });
    expect(cleanup).toHaveBeenCalledTimes(3);
  });

  it("skips the run when another instance holds the lock, and returns a pooled connection", async () => {
    const cleanup = vi.spyOn(handler, "cleanupExpiredRecords");
    lock.held.add("idempotency-maintenance:cleanup");
    expect(await runMaintenanceOnce("cleanup", handler, lock)).toEqual({ job: "cleanup", ran: false });
    const release = vi.fn();
    const pool: LockClient = {
      query: () => Promise.resolve({ rows: [] }),
      connect: () => Promise.resolve({ ...lock, release }),
    };
    expect(await runMaintenanceOnce("cleanup", handler, pool)).toEqual({ job: "cleanup", ran: false });
    expect(cleanup).not.toHaveBeenCalled();
    expect(release).toHaveBeenCalledOnce();
  });

  it("releases the lock when a job fails", async () => {
    vi.spyOn(handler, "cleanupExpiredRecords").mockRejectedValueOnce(new Error("store down"));
    await expect(runMaintenanceOnce("cleanup", handler, lock)).rejects.toThrow("store down");
    expect(lock.held.size).toBe(0);
  });

  it("runs on unref'd timers that stop cleanly", async () => {
    const recover = vi.spyOn(handler, "recoverStuckRecords");
    const maintenance = startMaintenance(handler, lock, { recoverEveryMs: 10, cleanupEveryMs: 10_000 });
    await vi.waitFor(() => expect(recover).toHaveBeenCalled());
    maintenance.stop();
  });
});
