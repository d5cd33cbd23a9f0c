// Hono, bundler resolution, ~/* alias.
import { fixtureSuite } from "./fixture-suite.js";

fixtureSuite({
  fixture: "hono-bundler",
  alias: "~/blocks",
  moduleStyle: "extensionless",
  framework: "hono",
  jobImport: '"~/blocks/idempotency"',
});
