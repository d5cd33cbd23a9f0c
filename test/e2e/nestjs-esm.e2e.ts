// NestJS 12 as `nest new` makes it today: ESM on NodeNext, TypeScript 6, oxlint (type-aware) instead of ESLint,
// Vitest with `include: ['**/*.spec.ts']`, @nestjs/observe's instrument around the app, and `nest build`. After
// `npm install` (nest new installs the packages itself, so add has none to install): init, add of all five blocks,
// tsc, the project's own format and lint (oxlint must find 0 errors and neither may leave blocks diff non-empty),
// nest build, the vendored NestJS tests once the include add names is in place, then the HTTP checklist on the
// built server; with DATABASE_URL the server runs the idempotency README's module on TypeOrmModule's DataSource.
import { serverFixtureSuite } from "./server-fixture-suite.js";

serverFixtureSuite({
  fixture: "nestjs-esm",
  adapter: "nestjs",
  absent: ["express"],
  settings: "Nest 12: NodeNext, strict, decorator metadata, TypeScript 6",
  entry: "dist/main.js",
  install: true,
  toolchain: ["format", "lint"],
  alsoAdd: ["logger", "outbox"],
  buildScript: true,
  testInclude: "src/blocks/**/*.test.ts",
  orm: { client: "typeorm", route: "/orders", table: "fixture_orders" },
  // Observe's agent sends to its hosted collector even before the app is linked: a port nothing listens on instead.
  serverEnv: { OBSERVE_ENDPOINT: "http://127.0.0.1:9" },
});
