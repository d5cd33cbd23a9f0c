// The shared flow's verdict, as every adapter receives it: one value per request, its outcome on it.
import { describe, expect, it } from "vitest";
import { IdempotencyHandler } from "../handler";
import { MemoryStore } from "../testing/memory-store";
import type { HttpResponse, Uncaptured } from "./http-response";
import { protectRoute, type ProtectedRequest } from "./protect";
import type { FrameworkDefaults } from "./route-options";

type Req = { key?: string };
const framework: FrameworkDefaults<Req> = {
  userIdOf: () => "u_1",
  operationOf: () => "POST /payments",
  bodyOf: () => ({ amount: 5 }),
};
const json = (status: number, body: object): HttpResponse => ({
  status,
  headers: { "content-type": "application/json" },
  body: Buffer.from(JSON.stringify(body)),
});

function requestFor(req: Req, produce: () => Promise<HttpResponse | Uncaptured>): ProtectedRequest {
  return { method: "POST", url: "/payments", keyHeader: req.key, hasCredentials: false, setContext: () => {}, produce };
}

describe("protectRoute's verdict", () => {
  const protect = () => protectRoute(new IdempotencyHandler(new MemoryStore()), { allowAnonymous: true }, framework);

  it("answers a first run and replays its retry without running the route again", async () => {
    const flow = protect();
    let runs = 0;
    const produce = () => Promise.resolve(json(201, { run: ++runs }));
    expect(await flow({ key: "k1" }, requestFor({ key: "k1" }, produce))).toMatchObject({
      kind: "answered",
      outcome: "executed",
      response: { status: 201 },
    });
    expect(await flow({ key: "k1" }, requestFor({ key: "k1" }, produce))).toMatchObject({
      kind: "replayed",
      outcome: "replayed",
      response: { status: 201 },
    });
    expect(runs).toBe(1);
  });

  it("gives an error status back as the route's own answer, outcome failed, and frees a transient one", async () => {
    const flow = protect();
    const verdicts = [
      await flow(
        {},
        requestFor({ key: "k3" }, () => Promise.resolve(json(503, { down: true }))),
      ),
      await flow(
        {},
        requestFor({ key: "k3" }, () => Promise.resolve(json(201, {}))),
      ),
    ];
    expect(verdicts.map((verdict) => [verdict.kind, verdict.outcome])).toEqual([
      ["answered", "failed"],
      ["answered", "executed"],
    ]);
  });

  it("refuses the retry of a permanent error status with 409 REQUEST_FAILED", async () => {
    const flow = protect();
    await flow(
      {},
      requestFor({ key: "k4" }, () => Promise.resolve(json(402, { declined: true }))),
    );
    const retry = await flow(
      {},
      requestFor({ key: "k4" }, () => Promise.resolve(json(201, {}))),
    );
    expect(retry).toMatchObject({ kind: "refused", outcome: "rejected", response: { status: 409 } });
  });

  it("says uncaptured for a streamed answer and frees its key for the next request", async () => {
    const flow = protect();
    expect(
      await flow(
        {},
        requestFor({ key: "k5" }, () => Promise.resolve({ uncaptured: "a test stream" })),
      ),
    ).toEqual({ kind: "uncaptured", outcome: "uncaptured" });
    expect(
      await flow(
        {},
        requestFor({ key: "k5" }, () => Promise.resolve(json(201, {}))),
      ),
    ).toMatchObject({ kind: "answered", outcome: "executed" });
    expect(
      await flow(
        {},
        requestFor({}, () => Promise.resolve({ uncaptured: "a test stream" })),
      ),
    ).toEqual({ kind: "uncaptured", outcome: "skipped" });
  });

  it("hands the route's own error to the framework: error, outcome failed", async () => {
    const boom = new Error("bank down");
    expect(
      await protect()(
        {},
        requestFor({ key: "k6" }, () => Promise.reject(boom)),
      ),
    ).toEqual({ kind: "error", outcome: "failed", error: boom });
  });
});
