// The helpers every block vendors (logger.ts, error-summary.ts): what a line keeps of an error, and where lines go without a logger.
import { afterEach, describe, expect, it, vi } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency";
import { errorStack, errorSummary } from "@/blocks/idempotency/error-summary";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { RateLimiter } from "@/blocks/rate-limiter";

afterEach(() => vi.restoreAllMocks());

const context = { operation: "charge", userId: "u1", key: "k1", requestHash: "h1" };

describe("errorSummary: what of an error is safe to log", () => {
  it("keeps name, message and code, masks a URL's credentials, and never copies what the error carries", () => {
    const err = Object.assign(new Error("connect ECONNREFUSED postgres://admin:hunter2@db:5432/prod"), {
      code: "ECONNREFUSED",
      config: { headers: { authorization: "Bearer sk_live_1" } },
    });
    expect(errorSummary(err)).toEqual({
      name: "Error",
      message: "connect ECONNREFUSED postgres://[Redacted]@db:5432/prod",
      code: "ECONNREFUSED",
    });
    expect(errorStack(err)).not.toContain("hunter2");
  });

  it("names a subclass that kept the name Error by its class, and a thrown string by its type", () => {
    class CardDeclined extends Error {}
    expect(errorSummary(new CardDeclined("declined")).name).toBe("CardDeclined");
    expect(errorSummary("redis://:secret@cache failed")).toEqual({
      name: "string",
      message: "redis://[Redacted]@cache failed",
    });
  });
});

describe("without a logger, a block's warnings and errors reach stderr", () => {
  it("the idempotency handler: a store that fails writes one JSON error line", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: string) => void lines.push(line));
    vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    const store = new MemoryStore();
    vi.spyOn(store, "create").mockRejectedValue(new Error("connect ECONNREFUSED postgres://admin:hunter2@db/prod"));
    const handler = new IdempotencyHandler(store);
    await expect(handler.execute(context, () => Promise.resolve(1))).rejects.toMatchObject({
      code: "STORE_UNAVAILABLE",
    });
    const logged = lines.map((line) => JSON.parse(line) as { level: string; err?: { message: string } });
    expect(logged.some((line) => line.level === "error" || line.level === "warn")).toBe(true);
    expect(lines.join("\n")).not.toContain("hunter2");
  });

  it("the rate limiter: a store that fails open writes a warn line, an allowed request none", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: string) => void lines.push(line));
    let fail = false;
    const store = {
      take: () =>
        fail
          ? Promise.reject(new Error("redis down"))
          : Promise.resolve({ allowed: true, tat: 0, retryAfterUs: 0, remaining: 9 } as never),
    };
    const limiter = new RateLimiter(store, { limit: 10, windowMs: 60_000, onStoreError: "allow" });
    await limiter.check("k");
    expect(lines).toEqual([]);
    fail = true;
    await limiter.check("k");
    expect(lines.map((line) => JSON.parse(line) as { level: string; msg: string })).toEqual([
      expect.objectContaining({ level: "warn", msg: "rate-limit: store failed, request let through uncounted" }),
    ]);
  });
});
