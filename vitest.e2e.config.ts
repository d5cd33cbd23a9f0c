// End-to-end suite: the built CLI on whole fixture projects (npm run test:e2e). Needs the npm registry.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.ts"],
    globalSetup: ["test/e2e/build-cli.ts"],
    // The fixtures mostly wait on npm, tsc and vitest child processes: run them side by side.
    maxWorkers: 3,
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
});
