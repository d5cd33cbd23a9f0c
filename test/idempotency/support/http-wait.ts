// waitMs over HTTP, for each store and style: a duplicate of a running request waits for it and gets its response.
import { expect, it } from "vitest";
import { created, errorCode, type Harness } from "./http-harness";

export function waitSuite(t: Harness): void {
  const user = "u_1";

  it("with the route's waitMs, a duplicate of a running request waits and gets its response replayed; the logic runs once", async () => {
    const { route, first, duplicate } = await t.duplicateWaiting(user, { route: { waitMs: 10_000 } });
    expect(first.status).toBe(201);
    expect(duplicate.status).toBe(201);
    expect(duplicate.body.equals(first.body)).toBe(true);
    expect(duplicate.headers.get("location")).toBe("/payments/pay_1");
    expect(duplicate.headers.get("idempotent-replayed")).toBe("true");
    expect(duplicate.context?.outcome).toBe("replayed");
    expect(route.runs).toBe(1);
  });

  it("with the handler's waitMs, the same: the route's own default is the handler's", async () => {
    const { route, duplicate } = await t.duplicateWaiting(user, { handler: { waitMs: 10_000 } });
    expect(duplicate.status).toBe(201);
    expect(duplicate.headers.get("idempotent-replayed")).toBe("true");
    expect(route.runs).toBe(1);
  });

  it("a waiting duplicate whose first request fails transiently runs the route itself", async () => {
    const respond = (run: number) => (run === 1 ? { status: 503, body: { error: "bank timeout" } } : created(run));
    const { route, first, duplicate } = await t.duplicateWaiting(user, { route: { waitMs: 10_000 }, respond });
    expect(first.status).toBe(503);
    expect(duplicate.status).toBe(201);
    expect(duplicate.json()).toMatchObject({ id: "pay_2" });
    expect(duplicate.headers.get("idempotent-replayed")).toBeNull();
    expect(route.runs).toBe(2);
  });

  it("a waiting duplicate whose first request fails for good gets 409 REQUEST_FAILED", async () => {
    const respond = (run: number) => ({ status: 402, body: { error: `card declined ${run}` } });
    const { route, duplicate } = await t.duplicateWaiting(user, { route: { waitMs: 10_000 }, respond });
    expect(duplicate.status).toBe(409);
    expect(errorCode(duplicate)).toBe("REQUEST_FAILED");
    expect(route.runs).toBe(1);
  });

  it("a route's waitMs 0 overrides the handler's: REQUEST_IN_PROGRESS at once, with Retry-After", async () => {
    const { route, duplicate } = await t.duplicateWhileRunning(user, { waitMs: 0 }, { waitMs: 10_000 });
    expect(duplicate.status).toBe(409);
    expect(errorCode(duplicate)).toBe("REQUEST_IN_PROGRESS");
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect(route.runs).toBe(1);
  });

  it("refuses a route whose waitMs is out of range when the app starts", async () => {
    await expect(t.start(t.route(created, { options: { waitMs: -1 } }))).rejects.toThrow(
      /`waitMs` must be a number of milliseconds/,
    );
    await expect(t.start(t.route(created, { options: { waitMs: 300_001 } }))).rejects.toThrow(RangeError);
  });
}
