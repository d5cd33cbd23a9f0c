// The reliability suite: crashes, stale workers, outages and races against real PostgreSQL and Redis.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: { "@/blocks": fileURLToPath(new URL("./registry", import.meta.url)) },
  },
  test: {
    include: ["test/reliability/**/*.test.ts"],
    globalSetup: ["test/reliability/support/global-setup.ts"],
    // One scenario at a time: they start processes, cut links and measure latency on a small machine.
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
