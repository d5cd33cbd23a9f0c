// Fastify, CommonJS with node10 resolution, no alias (every import relative and extensionless), the usual
// `decorateRequest("user", null)` user type, strict flags, and Prometheus metrics chosen by flag.
import { fixtureSuite } from "./fixture-suite.js";

fixtureSuite({
  fixture: "fastify-commonjs",
  alias: null,
  moduleStyle: "extensionless",
  framework: "fastify",
  jobImport: '"../idempotency-setup"',
  addArgs: ["--metrics", "prometheus"],
  dependencies: ["fastify", "pg", "prom-client"],
  absent: ["ioredis"],
  ts7Options: { moduleResolution: "bundler" },
});
