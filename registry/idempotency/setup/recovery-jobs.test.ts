// Recovery on a timer for stores that expire records themselves: a failure is logged, the timer goes on, close stops it.
import { describe, expect, it, vi } from "vitest";
import { IdempotencyHandler } from "../handler";
import type { BlockLogger as IdempotencyLogger } from "../logger";
import { MemoryStore } from "../testing/memory-store";
import { idempotencyLifecycle } from "./lifecycle";
import { recoveryJobs } from "./recovery-jobs";

const quiet: IdempotencyLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe("recoveryJobs", () => {
  it("a failing job is logged with its name and the error, and the timer goes on", async () => {
    vi.useFakeTimers();
    try {
      const errors: unknown[] = [];
      const handler = new IdempotencyHandler(new MemoryStore());
      const recover = vi
        .spyOn(handler, "recoverStuckRecords")
        .mockRejectedValueOnce(new Error("store down"))
        .mockResolvedValue({ recovered: 0 } as never);
      const logger = { ...quiet, error: (meta: Record<string, unknown>) => void errors.push(meta) };
      const lifecycle = idempotencyLifecycle({
        jobs: recoveryJobs(handler, logger, 1_000),
        logger,
        close: () => Promise.resolve(),
      });
      lifecycle.startMaintenance();
      await vi.advanceTimersByTimeAsync(2_000);
      expect(errors).toEqual([{ err: new Error("store down"), job: "recover" }]);
      expect(recover).toHaveBeenCalledTimes(2);
      await lifecycle.close();
      await vi.advanceTimersByTimeAsync(5_000);
      expect(recover).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("with cleanupEveryMs, expired records are deleted on their own timer in bounded batches, and in runOnce", async () => {
    vi.useFakeTimers();
    try {
      const infos: unknown[] = [];
      const handler = new IdempotencyHandler(new MemoryStore());
      vi.spyOn(handler, "recoverStuckRecords").mockResolvedValue({ recovered: 0 } as never);
      // A backlog of 5 expired rows, deleted 2 at a time.
      let expired = 5;
      const cleanup = vi.spyOn(handler, "cleanupExpiredRecords").mockImplementation(({ limit = 500 } = {}) => {
        const deleted = Math.min(limit, expired);
        expired -= deleted;
        return Promise.resolve({ deleted });
      });
      const logger = { ...quiet, info: (meta: Record<string, unknown>) => void infos.push(meta) };
      const jobs = recoveryJobs(handler, logger, 1_000, { cleanupEveryMs: 10_000, cleanupLimit: 2 });
      const lifecycle = idempotencyLifecycle({ jobs, logger, close: () => Promise.resolve() });
      lifecycle.startMaintenance();
      await vi.advanceTimersByTimeAsync(9_999);
      expect(cleanup).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(cleanup).toHaveBeenCalledTimes(3);
      expect(infos).toContainEqual({ job: "cleanup", deleted: 5 });
      await lifecycle.close();
      expired = 1;
      await jobs.runOnce();
      expect(cleanup).toHaveBeenCalledTimes(4);
      expect(expired).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("without cleanupEveryMs (Redis, DynamoDB), nothing is cleaned up", async () => {
    const handler = new IdempotencyHandler(new MemoryStore());
    const cleanup = vi.spyOn(handler, "cleanupExpiredRecords");
    await recoveryJobs(handler, quiet).runOnce();
    expect(cleanup).not.toHaveBeenCalled();
  });
});
