// NestJS, CommonJS with decorators and a guard that sets request.user: init, add (detects @nestjs/core) of all five blocks,
// tsc, the vendored NestJS tests, `npm run format` and `npm run lint` as `nest new` writes them (both must pass and leave
// `blocks diff` empty), then the HTTP checklist on the built server. The Express adapter the platform brings along is not copied.
import { serverFixtureSuite } from "./server-fixture-suite.js";

serverFixtureSuite({ fixture: "nestjs-commonjs", adapter: "nestjs", absent: ["express"], settings: "CommonJS with decorator metadata", entry: "dist/main.js", toolchain: ["format", "lint"], alsoAdd: ["logger", "outbox"] });
