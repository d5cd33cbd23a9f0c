// Koa, ESM + NodeNext, no alias: init, add (detects koa), tsc, the vendored Koa tests, then the HTTP checklist on the built server.
import { serverFixtureSuite } from "./server-fixture-suite.js";

serverFixtureSuite({
  fixture: "koa-esm",
  adapter: "koa",
  absent: ["express", "nestjs"],
  settings: "strict NodeNext",
  entry: "dist/server.js",
});
