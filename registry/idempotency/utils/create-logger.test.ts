import { describe, expect, it } from "vitest";
import { IdempotencyHandler } from "../handler";
import { MemoryStore } from "../testing/memory-store";
import { outcome } from "../testing/deferred";
import { createLoggerAdapter, type LogLevel } from "./create-logger";

const scope = { operation: "payments:create", userId: "u_1", key: "k-1" };

describe("the handler's logger option", () => {
  it("createLoggerAdapter bridges a (level, msg, meta) function, scope and status in meta", async () => {
    const calls: Array<[LogLevel, string, Record<string, unknown> | undefined]> = [];
    const logger = createLoggerAdapter((level, msg, meta) => void calls.push([level, msg, meta]));
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, { logger });

    await handler.execute({ ...scope, payload: { amount: 1 } }, () => "ok");
    await handler.execute({ ...scope, payload: { amount: 1 } }, () => "ok");
    await outcome(handler.execute({ ...scope, payload: { amount: 2 } }, () => "ok"));

    expect(calls).toEqual([
      ["debug", "idempotency: lock acquired", { ...scope, status: "PROCESSING" }],
      ["info", "idempotency: executed and stored the response", { ...scope, status: "SUCCESS" }],
      ["info", "idempotency: replayed a stored response", { ...scope, status: "SUCCESS", source: "store" }],
      ["warn", "idempotency: key reused with a different request", { ...scope, status: "SUCCESS", source: "store" }],
    ]);
  });

  it("takes a pino-like object with (obj, msg) methods as is, and skips debug lines when it has no debug", async () => {
    const lines: string[] = [];
    const write = (level: string) => (obj: object, msg: string) =>
      void lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
    const logger = { info: write("info"), warn: write("warn"), error: write("error") };
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, { logger });

    await handler.execute({ ...scope, payload: {} }, () => "ok");
    await handler.execute({ ...scope, payload: {} }, () => "ok");

    expect(lines).toEqual([
      `info idempotency: executed and stored the response ${JSON.stringify({ ...scope, status: "SUCCESS" })}`,
      `info idempotency: replayed a stored response ${JSON.stringify({ ...scope, status: "SUCCESS", source: "store" })}`,
    ]);
  });

  it("never lets a throwing logger change the outcome of a request", async () => {
    const logger = createLoggerAdapter(() => {
      throw new Error("log pipeline down");
    });
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, { logger });
    expect(await handler.execute({ ...scope, payload: {} }, () => "ok")).toEqual({ response: "ok", replayed: false });
    expect(await handler.execute({ ...scope, payload: {} }, () => "ok")).toEqual({ response: "ok", replayed: true });
  });
});
