// The logger block wired into the idempotency handler: decisions carry the request's id.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { IdempotencyHandler, type IdempotencyHandlerOptions } from "@/blocks/idempotency";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { logger, runWithLoggerContext } from "@/blocks/logger";
import { captureLogs } from "@/blocks/logger/testing/capture-logs";

describe("the logger block's pino logger in IdempotencyHandler", () => {
  it("is accepted as is, with no adapter", () => {
    const options: IdempotencyHandlerOptions = { logger };
    expect(() => new IdempotencyHandler(new MemoryStore(), undefined, options)).not.toThrow();
  });

  it("stamps each decision with the requestId of the request that caused it, under concurrency", async () => {
    const { logger: captured, lines } = captureLogs();
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, { logger: captured });
    const request = (requestId: string, key: string) =>
      runWithLoggerContext(requestId, () =>
        handler.execute({ operation: "payments:create", userId: "u_1", key, payload: { key } }, async () => {
          await sleep(key.length % 3);
          return "ok";
        }),
      );

    await Promise.all(["a", "bb", "ccc", "dddd"].map((key) => request(`first-${key}`, key)));
    await Promise.all(["a", "bb", "ccc", "dddd"].map((key) => request(`retry-${key}`, key)));

    const decisions = lines.filter((line) => String(line.msg).startsWith("idempotency:"));
    expect(decisions).toHaveLength(4 * 3);
    for (const line of decisions) {
      expect(line).toMatchObject({ userId: "u_1", operation: "payments:create", status: expect.any(String) });
      const expectedPrefix = line.msg === "idempotency: replayed a stored response" ? "retry" : "first";
      expect(line.requestId).toBe(`${expectedPrefix}-${String(line.key)}`);
    }
  });
});
