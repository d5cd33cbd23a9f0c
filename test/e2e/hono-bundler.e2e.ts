// Hono, bundler resolution, ~/* alias, JWT claims as the context's user, strict flags, Redis cache and metrics chosen.
import { fixtureSuite } from "./fixture-suite.js";

fixtureSuite({
  fixture: "hono-bundler",
  alias: "~/blocks",
  moduleStyle: "extensionless",
  framework: "hono",
  jobImport: '"../idempotency-setup"',
  addArgs: ["--cache", "redis", "--metrics", "prometheus"],
  dependencies: ["hono", "pg", "ioredis", "prom-client"],
  absent: [],
});
