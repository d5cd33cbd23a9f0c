// Fastify, CommonJS with node10 resolution, no alias: every import becomes relative and extensionless.
import { fixtureSuite } from "./fixture-suite.js";

fixtureSuite({
  fixture: "fastify-commonjs",
  alias: null,
  moduleStyle: "extensionless",
  framework: "fastify",
  jobImport: '"../blocks/idempotency"',
});
