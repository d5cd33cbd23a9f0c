// Unit, contract and HTTP suites. The reliability suite has its own config (npm run test:reliability).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: { "@/blocks": fileURLToPath(new URL("./registry", import.meta.url)) },
  },
  test: {
    include: ["registry/**/*.test.ts", "cli/**/*.test.ts", "test/**/*.test.ts"],
    // The Prisma wiring's test needs the app's generated PrismaClient: test/cli/add-wiring.test.ts runs it in a project that has one.
    exclude: [
      "**/node_modules/**",
      "test/reliability/**",
      "test/fixtures/**",
      "registry/idempotency/setup/database-prisma.test.ts",
    ],
    globalSetup: ["test/services-banner.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
