// `blocks doctor` on a project that breaks each rule, then on the same project once every finding is fixed.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runDoctor } from "../../cli/commands/doctor.js";
import { runInit } from "../../cli/commands/init.js";
import { tempProject } from "./helpers.js";

const BROKEN = `import { Hono } from "hono";
import { IdempotencyHandler } from "~/blocks/idempotency";
import { RedisCache } from "~/blocks/idempotency/caches/redis-cache";
import { idempotency } from "~/blocks/idempotency/adapters/hono";

declare const store: never;
declare const redis: never;
const cache = new RedisCache(redis, { ttlMs: 2 * 24 * 60 * 60 * 1000 });
const handler = new IdempotencyHandler(store, cache, { ttlMs: 86_400_000 });
export const app = new Hono();
app.get("/orders", (c) => c.json([]));
app.post("/orders", idempotency(handler), (c) => c.json({}, 201));
`;

const FIXED = `import { Hono } from "hono";
import { IdempotencyHandler } from "~/blocks/idempotency";
import { RedisCache } from "~/blocks/idempotency/caches/redis-cache";
import { idempotency } from "~/blocks/idempotency/adapters/hono";
import { createIdempotency } from "./idempotency-setup";

declare const store: never;
declare const redis: never;
declare const logger: never;
declare const metrics: never;
declare const pool: never;
const cache = new RedisCache(redis, { ttlMs: 60 * 60 * 1000 });
const handler = new IdempotencyHandler(store, cache, { ttlMs: 86_400_000, logger, metrics });
createIdempotency().startMaintenance();
const routeOptions = { getUserId: (c: { get(key: "user"): { id: string } }) => c.get("user").id, isPermanentError: () => false, requireKey: true };
export const app = new Hono();
app.post("/orders", idempotency(handler, routeOptions), (c) => c.json({}, 201));
`;

function lineOf(dir: string, file: string, pattern: RegExp): number {
  const lines = readFileSync(path.join(dir, file), "utf8").split("\n");
  return lines.findIndex((line) => pattern.test(line)) + 1;
}
// The app's setup module only re-exports the vendored wiring (no startMaintenance example of its own): doctor points at its first line.
const setupLine = (dir: string) => lineOf(dir, "src/idempotency-setup.ts", /\bstartMaintenance\b/) || 1;
const COMPOSE = "src/blocks/idempotency/setup/compose.ts";

async function brokenProject() {
  const dir = tempProject("hono-bundler");
  await runInit({ cwd: dir, yes: true });
  await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, metrics: "prometheus" });
  writeFileSync(path.join(dir, "src/app.ts"), BROKEN);
  const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  // Metrics chosen at add, then prom-client moved to devDependencies: a production install would miss it.
  delete pkg.dependencies["prom-client"];
  pkg.devDependencies["prom-client"] = "^15.1.3";
  pkg.scripts = { build: "tsc -p tsconfig.json" };
  writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  return dir;
}

function fix(dir: string) {
  writeFileSync(path.join(dir, "src/app.ts"), FIXED);
  const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  delete pkg.devDependencies["prom-client"];
  pkg.dependencies["prom-client"] = "^15.1.3";
  pkg.scripts = { build: "tsc -p tsconfig.build.json" };
  writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  writeFileSync(
    path.join(dir, "tsconfig.build.json"),
    JSON.stringify({
      extends: "./tsconfig.json",
      compilerOptions: { noEmit: false },
      include: ["src"],
      exclude: ["src/blocks/**/*.test.ts", "src/blocks/**/testing/**"],
    }),
  );
}

describe("blocks doctor", () => {
  it("lists each broken rule with file:line and the fix, and is not ok (exit 1)", async () => {
    const dir = await brokenProject();
    const result = await runDoctor({ cwd: dir, databaseUrl: "" });
    expect(result.ok).toBe(false);
    const tsconfig = readFileSync(path.join(dir, "tsconfig.json"), "utf8");
    const includeLine = tsconfig.slice(0, tsconfig.indexOf('"include"')).split("\n").length;
    const seen = result.findings.map((finding) => `${finding.file}:${finding.line} ${finding.rule}`);
    expect(seen).toEqual(
      expect.arrayContaining([
        "src/app.ts:8 cache-ttl",
        "src/app.ts:9 handler-observability",
        "src/app.ts:12 route-user-id",
        "src/app.ts:12 route-permanent-error",
        "src/app.ts:12 route-require-key",
        `src/idempotency-setup.ts:${setupLine(dir)} maintenance-scheduled`,
        `tsconfig.json:${includeLine} tests-in-build`,
      ]),
    );
    expect(readFileSync(path.join(dir, "src/idempotency-setup.ts"), "utf8")).toMatch(
      /^export \* from "[^"]*\/idempotency\/setup\/index";$/m,
    );
    expect(setupLine(dir)).toBe(1);
    // Every vendored runtime file importing prom-client: the prometheus variant of the wiring's metrics.ts, and the sink it builds on.
    expect(seen.filter((line) => line.endsWith("runtime-package-in-dev"))).toEqual([
      "src/blocks/idempotency/setup/metrics.ts:2 runtime-package-in-dev",
      "src/blocks/idempotency/utils/prometheus-sink.ts:2 runtime-package-in-dev",
    ]);
    // The vendored composition passes logger and metrics: the only handler finding is the app's own handler.
    expect(seen.filter((line) => line.endsWith("handler-observability"))).toEqual([
      "src/app.ts:9 handler-observability",
    ]);
    expect(result.findings.every((finding) => finding.fix.length > 20)).toBe(true);
    // A GET route is not state-changing: no requireKey finding for it.
    expect(seen.filter((line) => line.startsWith("src/app.ts:10"))).toEqual([]);
  });

  it("finds the vendored tests in a build that names a folder (`tsc -p .`)", async () => {
    const dir = await brokenProject();
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    pkg.scripts = { build: "tsc -p ." };
    writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
    const result = await runDoctor({ cwd: dir, databaseUrl: "" });
    const tsconfig = readFileSync(path.join(dir, "tsconfig.json"), "utf8");
    const includeLine = tsconfig.slice(0, tsconfig.indexOf('"include"')).split("\n").length;
    expect(result.findings.map((finding) => `${finding.file}:${finding.line} ${finding.rule}`)).toContain(
      `tsconfig.json:${includeLine} tests-in-build`,
    );
  });

  it("reports nothing once every finding is fixed", async () => {
    const dir = await brokenProject();
    fix(dir);
    const result = await runDoctor({ cwd: dir, databaseUrl: "" });
    expect(result.findings).toEqual([]);
    expect(result.ok).toBe(true);
  });

  it("the handler is checked where it is built: the app's own `new IdempotencyHandler(store)` without logger, and the vendored composition once an edit drops its logger", async () => {
    const dir = await brokenProject();
    fix(dir);
    mkdirSync(path.join(dir, "src/more"), { recursive: true });
    writeFileSync(
      path.join(dir, "src/more/handler.ts"),
      `import { IdempotencyHandler } from "~/blocks/idempotency";
declare const store: never;
export const bare = new IdempotencyHandler(store);
`,
    );
    const compose = path.join(dir, COMPOSE);
    const shipped = readFileSync(compose, "utf8");
    expect(shipped).toContain("{ logger, metrics }");
    writeFileSync(compose, shipped.replace("{ logger, metrics }", "{ metrics }"));
    const result = await runDoctor({ cwd: dir, databaseUrl: "" });
    const handlerFindings = result.findings.filter((finding) => finding.rule === "handler-observability");
    expect(handlerFindings.map((finding) => `${finding.file}:${finding.line} ${finding.message}`)).toEqual([
      `${COMPOSE}:${lineOf(dir, COMPOSE, /new IdempotencyHandler/)} new IdempotencyHandler(...) has no logger`,
      "src/more/handler.ts:3 new IdempotencyHandler(...) has no logger and no metrics",
    ]);
  });

  it("capture and wrapper styles on any adapter, the Fastify plugin and decorators are all checked", async () => {
    const dir = await brokenProject();
    fix(dir);
    mkdirSync(path.join(dir, "src/more"), { recursive: true });
    writeFileSync(
      path.join(dir, "src/more/routes.ts"),
      `declare const app: any, handler: any, idempotent: any, idempotencyPlugin: any, withIdempotency: any, Idempotent: any;
app.post("/a", idempotent(handler, { getUserId: () => "u", requireKey: true, run: async () => 1 }));
app.register(idempotencyPlugin, { handler, isPermanentError: () => false, requireKey: true });
export const b = withIdempotency(handler, { getUserId: () => "u", isPermanentError: () => false, requireKey: false });
class C { @Idempotent({ getUserId: () => "u", isPermanentError: () => false }) create() {} }
`,
    );
    const seen = (await runDoctor({ cwd: dir, databaseUrl: "" })).findings.map(
      (finding) => `${finding.file}:${finding.line} ${finding.rule}`,
    );
    expect(seen).toEqual([
      "src/more/routes.ts:2 route-permanent-error",
      "src/more/routes.ts:3 route-user-id",
      "src/more/routes.ts:4 route-require-key",
      "src/more/routes.ts:5 route-require-key",
    ]);
  });

  it("a route with transaction: true needs no requireKey: it refuses a request without a key itself (doctor asked for it, a new-user trial found)", async () => {
    const dir = await brokenProject();
    fix(dir);
    mkdirSync(path.join(dir, "src/more"), { recursive: true });
    writeFileSync(
      path.join(dir, "src/more/routes.ts"),
      `declare const handler: any, Idempotent: any, idempotent: any, app: any;
class C { @Idempotent({ getUserId: () => "u", isPermanentError: () => false, transaction: true }) create() {} }
app.post("/b", idempotent(handler, { getUserId: () => "u", isPermanentError: () => false, transaction: false, run: async () => 1 }));
`,
    );
    const seen = (await runDoctor({ cwd: dir, databaseUrl: "" })).findings.map(
      (finding) => `${finding.file}:${finding.line} ${finding.rule}`,
    );
    expect(seen).toEqual(["src/more/routes.ts:3 route-require-key"]);
  });

  it("Express's capture middleware, which never sees a thrown error, is not asked for isPermanentError; its wrapper and Hono's capture are", async () => {
    const dir = await brokenProject();
    fix(dir);
    mkdirSync(path.join(dir, "src/more"), { recursive: true });
    writeFileSync(
      path.join(dir, "src/more/express-routes.ts"),
      `import * as adapter from "~/blocks/idempotency/adapters/express.js";
import { idempotency, idempotent } from "~/blocks/idempotency/adapters/express";
import * as hono from "~/blocks/idempotency/adapters/hono";
declare const app: any, handler: any;
app.post("/a", idempotency(handler, { getUserId: () => "u", requireKey: true }), () => {});
app.post("/b", adapter.idempotency(handler, { getUserId: () => "u", requireKey: true }), () => {});
app.post("/c", idempotent(handler, { getUserId: () => "u", requireKey: true, run: async () => ({ body: 1 }) }));
app.post("/d", hono.idempotency(handler, { getUserId: () => "u", requireKey: true }));
`,
    );
    const seen = (await runDoctor({ cwd: dir, databaseUrl: "" })).findings.map(
      (finding) => `${finding.file}:${finding.line} ${finding.rule}`,
    );
    expect(seen).toEqual([
      "src/more/express-routes.ts:7 route-permanent-error",
      "src/more/express-routes.ts:8 route-permanent-error",
    ]);
  });

  const url = process.env.DATABASE_URL ?? "";
  it.skipIf(!url)("[DATABASE_URL] finds the migration not applied, and nothing once it is", async () => {
    const table = `blocks_doctor_${process.pid}`;
    const dir = tempProject("hono-bundler");
    await runInit({ cwd: dir, yes: true });
    await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, table });
    const before = await runDoctor({ cwd: dir, databaseUrl: url });
    expect(
      before.findings.filter((finding) => finding.rule === "migration-applied").map((finding) => finding.message),
    ).toEqual([`${table}, ${table}_retries, ${table}_claim(), ${table}_complete() missing on DATABASE_URL`]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { runMigrate } = await import("../../cli/commands/migrate.js");
      await runMigrate({ cwd: dir, table, apply: true, databaseUrl: url });
      const after = await runDoctor({ cwd: dir, databaseUrl: url });
      expect(after.findings.filter((finding) => finding.rule === "migration-applied")).toEqual([]);
    } finally {
      await client.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
      await client.query(`DROP FUNCTION IF EXISTS ${table}_claim, ${table}_complete`);
      await client.end();
    }
  });
});
