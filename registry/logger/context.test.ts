import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { getLoggerContext, runWithLoggerContext } from "./context";
import { captureLogs } from "./testing/capture-logs";

describe("runWithLoggerContext", () => {
  it("keeps each concurrent request's requestId across awaits, timers and callbacks", async () => {
    const { logger, lines } = captureLogs();
    const emitter = new EventEmitter();

    const request = (n: number) =>
      runWithLoggerContext(`req-${n}`, async () => {
        logger.info({ n }, "start");
        await sleep(n % 4); // real, tiny delays so the requests finish out of order
        logger.info({ n }, "after await");
        await new Promise<void>((resolve) =>
          setTimeout(
            () => {
              logger.info({ n }, "in timer");
              resolve();
            },
            (n * 7) % 3,
          ),
        );
        await nextTurn();
        queueMicrotask(() => logger.info({ n }, "in microtask"));
        emitter.once(`done-${n}`, () => logger.info({ n }, "in listener"));
        return n;
      });

    const results = await Promise.all(Array.from({ length: 40 }, (_, n) => request(n)));
    // Emitted from outside every request: a listener runs in the emitter's context, not the registrant's.
    for (const n of results) emitter.emit(`done-${n}`);

    const insideRequests = lines.filter((line) => line.msg !== "in listener");
    expect(insideRequests).toHaveLength(40 * 4);
    for (const line of insideRequests) expect(line.requestId).toBe(`req-${String(line.n)}`);
    // No bleed the other way either: work triggered from outside carries no request's id.
    const fromOutside = lines.filter((line) => line.msg === "in listener");
    expect(fromOutside).toHaveLength(40);
    for (const line of fromOutside) expect(line.requestId).toBeUndefined();
    // The requests really interleaved: their timers fired out of start order.
    const timerOrder = lines.filter((line) => line.msg === "in timer").map((line) => Number(line.n));
    expect(timerOrder).not.toEqual([...timerOrder].sort((a, b) => a - b));
  });

  it("has no context outside, and a nested run replaces the id only inside itself", async () => {
    const { logger, lines } = captureLogs();
    expect(getLoggerContext()).toBeUndefined();
    await runWithLoggerContext("outer", async () => {
      await runWithLoggerContext("inner", async () => {
        await sleep(1);
        logger.info("nested");
      });
      logger.info("back outside");
    });
    logger.info("no request");

    expect(lines.map((line) => [line.msg, line.requestId])).toEqual([
      ["nested", "inner"],
      ["back outside", "outer"],
      ["no request", undefined],
    ]);
  });

  it("returns what fn returns and exposes the context to getLoggerContext", async () => {
    expect(runWithLoggerContext("sync", () => getLoggerContext())).toEqual({ requestId: "sync" });
    await expect(runWithLoggerContext("async", () => Promise.resolve(getLoggerContext()?.requestId))).resolves.toBe(
      "async",
    );
  });
});
