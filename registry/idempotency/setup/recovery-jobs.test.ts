// Recovery on a timer for stores that expire records themselves: a failure is logged, the timer goes on, close stops it.
import { describe, expect, it, vi } from "vitest";
import { IdempotencyHandler } from "../handler";
import type { IdempotencyLogger } from "../logger";
import { MemoryStore } from "../stores/memory-store";
import { idempotencyLifecycle } from "./lifecycle";
import { recoveryJobs } from "./recovery-jobs";

const quiet: IdempotencyLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe("recoveryJobs", () => {
  it("a failing job is logged with its name and the error, and the timer goes on", async () => {
    vi.useFakeTimers();
    try {
      const errors: unknown[] = [];
      const handler = new IdempotencyHandler(new MemoryStore());
      const recover = vi.spyOn(handler, "recoverStuckRecords").mockRejectedValueOnce(new Error("store down")).mockResolvedValue({ recovered: 0 } as never);
      const logger = { ...quiet, error: (meta: Record<string, unknown>) => void errors.push(meta) };
      const lifecycle = idempotencyLifecycle({ jobs: recoveryJobs(handler, logger, 1_000), logger, close: () => Promise.resolve() });
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
});
