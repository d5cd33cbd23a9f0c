// Faults found by the reliability suite (test/reliability), one regression test each, named after the fault.
import { describe, expect, it } from "vitest";
import { IdempotencyHandler } from "./handler";
import { MemoryStore } from "./stores/memory-store";
import { deferred, outcome } from "./testing/deferred";
import { recordingLogger } from "./testing/recorders";

const MINUTE = 60_000;
const payment = { operation: "payments:create", userId: "u_1", key: "k-1", payload: { amount: 100 } };
class GatewayTimeout extends Error {}

describe("regressions found by the reliability suite", () => {
  it("a stale execution's late transient failure does not count against the new owner's retry budget", async () => {
    let offset = 0;
    const store = new MemoryStore({ now: () => Date.now() + offset });
    const logger = recordingLogger();
    const handler = new IdempotencyHandler(store, undefined, { heartbeatIntervalMs: 0, maxRetries: 3, logger });
    const staleGate = deferred();
    const stale = outcome(handler.execute(payment, async () => (await staleGate.promise, Promise.reject(new GatewayTimeout("stale")))));
    await expect.poll(() => store.get(payment)).toBeDefined();

    offset += 10 * MINUTE;
    expect(await handler.recoverStuckRecords({ timeoutInMs: 5 * MINUTE })).toEqual({ released: 1, poisoned: 0 });
    const ownerGate = deferred();
    const owner = outcome(handler.execute(payment, async () => (await ownerGate.promise, Promise.reject(new GatewayTimeout("owner")))));
    await expect.poll(async () => (await store.get(payment))?.status).toBe("PROCESSING");

    staleGate.resolve();
    expect(await stale).toMatchObject({ ok: false, error: { message: "stale" } });
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: "error", status: "LEASE_LOST", key: "k-1" }));
    ownerGate.resolve();
    expect(await owner).toMatchObject({ ok: false, error: { message: "owner" } });

    // One recovered stall and one real failure: two of three attempts spent, so the retry still runs.
    expect(await handler.execute(payment, async () => "charged")).toEqual({ response: "charged", replayed: false });
  });
});
