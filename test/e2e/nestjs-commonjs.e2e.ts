// NestJS with TypeORM, CommonJS with decorators and a guard that sets request.user: init, add (detects @nestjs/core and
// typeorm) of all five blocks, tsc, the vendored NestJS tests, `npm run format` and `npm run lint` as `nest new` writes them
// (both must pass and leave `blocks diff` empty), then the HTTP checklist on the built server; with DATABASE_URL the server
// runs on TypeORM's DataSource and its transactional route commits the order with the key. The Express adapter the
// platform brings along is not copied.
import { serverFixtureSuite } from "./server-fixture-suite.js";

serverFixtureSuite({
  fixture: "nestjs-commonjs",
  adapter: "nestjs",
  absent: ["express"],
  settings: "CommonJS with decorator metadata",
  entry: "dist/main.js",
  toolchain: ["format", "lint"],
  alsoAdd: ["logger", "outbox"],
  orm: { client: "typeorm", route: "/orders", table: "fixture_orders" },
});
