// `runAdd` on a fixture copy, without installing: what is written, what is kept, and the clear errors.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runInit } from "../../cli/commands/init.js";
import { contentHash } from "../../cli/utils/files.js";
import { configureOutput } from "../../cli/utils/logger.js";
import { rejection, tempProject } from "./helpers.js";

async function initialised(fixture = "hono-bundler") {
  const dir = tempProject(fixture);
  await runInit({ cwd: dir, yes: true });
  return dir;
}

const add = (cwd: string, options: Partial<Parameters<typeof runAdd>[0]> = {}) =>
  runAdd({ blocks: ["idempotency"], cwd, yes: true, install: false, ...options });

const lockOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8"));

describe("blocks add", () => {
  it("its Next: test command runs the wiring's own test too, the one on the app's real PostgreSQL client", async () => {
    const dir = await initialised();
    configureOutput({ silent: false });
    const out: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
    try {
      await add(dir);
    } finally {
      vi.restoreAllMocks();
      configureOutput({ silent: true });
    }
    // The wiring's test is a block file now (setup/database.test.ts, the pg version on PGlite): the blocks folder's run covers it.
    expect(existsSync(path.join(dir, "src/blocks/idempotency/setup/database.test.ts"))).toBe(true);
    expect(out.join("")).toContain(
      "npx vitest run src/blocks (the wiring's test runs on an embedded PostgreSQL, PGlite: no server needed)",
    );
  });

  it("writes the block with its tests, the maintenance job and the migration, and locks every file's hash", async () => {
    const dir = await initialised();
    const result = await add(dir);
    expect(result.frameworks).toEqual(["hono"]);
    expect(result.files.every((file) => file.state === "create" && file.write)).toBe(true);
    const targets = result.files.map((file) => file.target);
    expect(targets).toEqual(
      expect.arrayContaining([
        "src/blocks/idempotency/adapters/hono.test.ts",
        "src/blocks/idempotency/maintenance.ts",
        "src/idempotency-setup.ts",
      ]),
    );
    expect(targets).not.toContain("src/blocks/idempotency/adapters/express.test.ts");
    // Metrics were not chosen (no prom-client in package.json): its files and package stay out.
    expect(targets).not.toContain("src/blocks/idempotency/utils/prometheus-metrics.ts");
    const job = readFileSync(path.join(dir, "src/jobs/idempotency-maintenance.ts"), "utf8");
    expect(job).toContain(`from "../idempotency-setup";`);
    const setup = readFileSync(path.join(dir, "src/idempotency-setup.ts"), "utf8");
    expect(setup).toContain(`export * from "./blocks/idempotency/setup/index";`);
    // The wiring is block code, locked like any block file, with the version of each variant the lock records.
    expect(readFileSync(path.join(dir, "src/blocks/idempotency/setup/cache.ts"), "utf8")).not.toContain("ioredis");
    expect(lockOf(dir).blocks.idempotency.files).toHaveProperty(["src/blocks/idempotency/setup/database.ts"]);
    expect(lockOf(dir).blocks.idempotency.variants["idempotency/setup/database.ts"]).toBe(
      "idempotency/setup/database-pg.ts",
    );
    const lock = lockOf(dir);
    const handler = readFileSync(path.join(dir, "src/blocks/idempotency/handler.ts"), "utf8");
    expect(lock.blocks.idempotency.files["src/blocks/idempotency/handler.ts"]).toBe(contentHash(handler));
    expect(existsSync(path.join(dir, lock.migrations.idempotency_records))).toBe(true);
    expect(result.install.commands).toEqual([
      "npm install -- pg@^8.23.1",
      "npm install --save-dev -- @electric-sql/pglite@^0.5.17 @types/emscripten@^1.41.1 @types/pg@^8.23.1 vitest@^4.1.12",
    ]);
    expect(lockOf(dir).blocks.idempotency.files).not.toHaveProperty("src/idempotency-setup.ts");
  });

  it("vendors each block's own copy of the route and user reader, its framework's only", async () => {
    const dir = await initialised();
    const result = await add(dir, { blocks: ["idempotency", "rate-limiter"] });
    const readers = result.files
      .map((file) => file.target)
      .filter((target) => /\/adapters\/(route-and-user|mount-template)-/.test(target))
      .sort();
    expect(readers).toEqual([
      "src/blocks/idempotency/adapters/route-and-user-hono.ts",
      "src/blocks/rate-limiter/adapters/route-and-user-hono.ts",
    ]);
  });

  it("skips identical files on a second run, and writes nothing", async () => {
    const dir = await initialised();
    await add(dir);
    const again = await add(dir);
    expect(again.files.every((file) => file.state === "unchanged" && !file.write)).toBe(true);
    expect(again.migrations[0]?.existing).toBe(lockOf(dir).migrations.idempotency_records);
  });

  it("keeps a file the user changed, and replaces it only with --overwrite", async () => {
    const dir = await initialised();
    await add(dir);
    const file = path.join(dir, "src/blocks/idempotency/errors.ts");
    writeFileSync(file, "// mine\n");
    const kept = await add(dir);
    expect(kept.files.find((entry) => entry.target.endsWith("/errors.ts"))).toMatchObject({
      state: "modified",
      write: false,
    });
    expect(readFileSync(file, "utf8")).toBe("// mine\n");
    await add(dir, { overwrite: true });
    expect(readFileSync(file, "utf8")).not.toBe("// mine\n");
  });

  it("updates a file the user did not touch when the registry version moved on", async () => {
    const dir = await initialised();
    await add(dir);
    const file = path.join(dir, "src/blocks/idempotency/types.ts");
    writeFileSync(file, "// what an older registry wrote\n");
    const lock = lockOf(dir);
    lock.blocks.idempotency.files["src/blocks/idempotency/types.ts"] = contentHash("// what an older registry wrote\n");
    writeFileSync(path.join(dir, "blocks.lock.json"), JSON.stringify(lock));
    const result = await add(dir);
    expect(result.files.find((entry) => entry.target.endsWith("/types.ts"))).toMatchObject({
      state: "update",
      write: true,
    });
    expect(readFileSync(file, "utf8")).toContain("RecordStatus");
  });

  it("asks before replacing a file blocks never wrote: --yes keeps it, no terminal and no flag fails naming both", async () => {
    const dir = await initialised();
    mkdirSync(path.join(dir, "src/blocks/idempotency"), { recursive: true });
    writeFileSync(path.join(dir, "src/blocks/idempotency/errors.ts"), "// someone else's\n");
    const error = await rejection(add(dir, { yes: false }));
    expect(error.code).toBe("DECISION_REQUIRED");
    expect(error.suggestion).toMatch(/--overwrite.*--yes/);
    const kept = await add(dir);
    expect(kept.files.find((entry) => entry.target.endsWith("/errors.ts"))).toMatchObject({
      state: "conflict",
      write: false,
    });
    expect(lockOf(dir).blocks.idempotency.files).not.toHaveProperty("src/blocks/idempotency/errors.ts");
  });

  it("--dry-run plans everything and writes nothing", async () => {
    const dir = await initialised();
    const plan = await add(dir, { dryRun: true, yes: false });
    expect(plan.files.length).toBeGreaterThan(20);
    expect(plan.migrations[0]?.files[0]).toMatch(/^migrations\/\d{14}_create_idempotency_records\.sql$/);
    expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
    expect(existsSync(path.join(dir, "blocks.lock.json"))).toBe(false);
  });

  it("--framework none copies the framework-independent core only", async () => {
    const dir = await initialised();
    const result = await add(dir, { framework: ["none"] });
    expect(result.files.some((file) => file.target.includes("metrics-hono"))).toBe(false);
  });

  it("--no-tests leaves the tests and their helpers out", async () => {
    const dir = await initialised();
    const result = await add(dir, { tests: false });
    expect(result.files.some((file) => file.target.endsWith(".test.ts") || file.target.includes("/testing/"))).toBe(
      false,
    );
  });

  it("copies what the selection runs: no unchosen cache, and the memory store and PGlite client only with the tests", async () => {
    const vendored = async (tests: boolean) =>
      (await add(await initialised(), { tests })).files
        .map((file) => file.target)
        .filter((target) => target.startsWith("src/blocks/idempotency/"));
    const withTests = await vendored(true);
    expect(withTests).toEqual(
      expect.arrayContaining([
        "src/blocks/idempotency/testing/memory-store.ts",
        "src/blocks/idempotency/testing/pglite.ts",
      ]),
    );
    const runtime = await vendored(false);
    expect(runtime.filter((target) => /memory-|pglite|redis-cache/.test(target))).toEqual([]);
    expect(withTests.filter((target) => target.includes("redis-cache"))).toEqual([]);
  });

  it("fails before writing anything when a folder cannot be written", async () => {
    const dir = await initialised();
    writeFileSync(path.join(dir, "src/blocks"), "a file where the blocks folder should be\n");
    const error = await rejection(add(dir));
    expect(error.code).toBe("NOT_WRITABLE");
    expect(existsSync(path.join(dir, "src/jobs"))).toBe(false);
  });

  it("adds the logger block on its own: its middleware for the project's framework, no migration, no job", async () => {
    const dir = await initialised();
    const result = await add(dir, { blocks: ["logger"] });
    expect(result.blocks).toEqual(["logger"]);
    expect(result.migrations).toEqual([]);
    expect(result.files.map((file) => file.target)).toContain("src/blocks/logger/adapters/hono.ts");
    expect(result.files.some((file) => file.target.includes("middleware/express"))).toBe(false);
    expect(result.dependencies.dependencies).toEqual(["pino@^10.4.0"]);
  });

  it.each([
    ["MISSING_PACKAGE_JSON", (dir: string) => rmSync(path.join(dir, "package.json")), {}],
    ["MISSING_CONFIG", (dir: string) => rmSync(path.join(dir, "blocks.json")), {}],
    ["INVALID_CONFIG", (dir: string) => writeFileSync(path.join(dir, "blocks.json"), `{ "dir": "/etc" }`), {}],
    ["INVALID_CONFIG", (dir: string) => writeFileSync(path.join(dir, "blocks.json"), "{ not json"), {}],
    ["UNKNOWN_BLOCK", () => {}, { blocks: ["cache"] }],
    ["UNKNOWN_FRAMEWORK", () => {}, { framework: ["sveltekit"] }],
  ])("reports %s with a suggestion", async (code, breakIt, options) => {
    const dir = await initialised();
    breakIt(dir);
    const error = await rejection(add(dir, options));
    expect(error.code).toBe(code);
    expect(error.suggestion).toBeTruthy();
  });
});

describe("blocks add: features, versions and the build", () => {
  const packageJson = (dir: string) => path.join(dir, "package.json");
  const edit = (dir: string, change: (pkg: Record<string, Record<string, string>>) => void) => {
    const pkg = JSON.parse(readFileSync(packageJson(dir), "utf8"));
    change(pkg);
    writeFileSync(packageJson(dir), JSON.stringify(pkg));
  };

  it("--cache redis --metrics prometheus install ioredis and prom-client as dependencies and copy the metrics files", async () => {
    const dir = await initialised();
    const result = await add(dir, { cache: "redis", metrics: "prometheus" });
    expect(result.features).toEqual(["cache", "client-pg", "metrics", "postgres-store"]);
    expect(result.dependencies.dependencies).toEqual(["ioredis@^5.11.1", "pg@^8.23.1", "prom-client@^15.1.3"]);
    expect(result.files.map((file) => file.target)).toContain("src/blocks/idempotency/utils/prometheus-metrics.ts");
    const setup = (file: string) => readFileSync(path.join(dir, "src/blocks/idempotency/setup", file), "utf8");
    expect(setup("cache.ts")).toContain("new RedisCache(client)");
    expect(setup("metrics-route.ts")).toContain("export async function metricsRoute(c: Context)");
  });

  it("--yes turns a feature on when the project already declares its package", async () => {
    const dir = await initialised();
    edit(dir, (pkg) => ((pkg.dependencies ??= {}).ioredis = "^5.0.0"));
    const result = await add(dir);
    expect(result.features).toEqual(["cache", "client-pg", "postgres-store"]);
    expect(result.dependencies.dependencies).toEqual(["pg@^8.23.1"]);
  });

  it("refuses an unknown feature choice", async () => {
    const error = await rejection(add(await initialised(), { cache: "memcached" }));
    expect(error.code).toBe("INVALID_OPTION");
    expect(error.suggestion).toContain("--cache redis");
  });

  it("refuses a framework older than the adapter needs, before writing anything", async () => {
    const dir = await initialised();
    edit(dir, (pkg) => ((pkg.dependencies ??= {}).hono = "^4.6.0"));
    const error = await rejection(add(dir));
    expect(error.code).toBe("UNSUPPORTED_VERSION");
    expect(error.message).toContain("hono 4.8.0 or later");
    expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
  });

  it.each([
    { block: "idempotency", framework: "koa", old: { koa: "^2.15.3" }, message: "koa 3.0.0 or later" },
    {
      block: "idempotency",
      framework: "nestjs",
      old: { "@nestjs/core": "^10.4.0", "@nestjs/common": "^11.0.0" },
      message: "@nestjs/core 11.0.0 or later",
    },
    {
      block: "idempotency",
      framework: "nestjs",
      old: { "@nestjs/core": "^11.0.0", "@nestjs/common": "^10.4.0" },
      message: "@nestjs/common 11.0.0 or later",
    },
    { block: "idempotency", framework: "fetch", old: { next: "14.2.3" }, message: "next 15.0.0 or later" },
    { block: "rate-limiter", framework: "fetch", old: { next: "^14.0.0" }, message: "next 15.0.0 or later" },
    { block: "rate-limiter", framework: "koa", old: { koa: "2.x" }, message: "koa 3.0.0 or later" },
  ])(
    "refuses $old for the $block $framework adapter, naming the version it needs",
    async ({ block, framework, old, message }) => {
      const dir = await initialised();
      edit(dir, (pkg) => (pkg.dependencies = { ...old }));
      const error = await rejection(add(dir, { blocks: [block], framework }));
      expect(error.code).toBe("UNSUPPORTED_VERSION");
      expect(error.message).toContain(`The ${block} block needs ${message}`);
      expect(error.suggestion).toContain("--framework");
      expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
    },
  );

  it.each([
    { framework: "koa", current: { koa: "^3.0.0" } },
    { framework: "nestjs", current: { "@nestjs/core": "^11.0.0", "@nestjs/common": "^11.1.0" } },
    { framework: "fetch", current: { next: "^16.4.6" } },
  ])("adds the $framework adapter for the versions it supports ($current)", async ({ framework, current }) => {
    const dir = await initialised();
    edit(dir, (pkg) => (pkg.dependencies = { ...current }));
    const result = await add(dir, { framework });
    expect(result.frameworks).toEqual([framework]);
    expect(result.files.map((file) => file.target)).toContain(`src/blocks/idempotency/adapters/${framework}.ts`);
  });

  it("a `tsc` build on tsconfig.json gets tsconfig.build.json excluding the tests, and the script uses it", async () => {
    const dir = await initialised("express-nodenext");
    const result = await add(dir);
    expect(result.build).toMatchObject({ kind: "edit", files: ["tsconfig.build.json", "package.json"] });
    expect(JSON.parse(readFileSync(path.join(dir, "tsconfig.build.json"), "utf8")).exclude).toEqual([
      "node_modules",
      "dist",
      "src/blocks/**/*.test.ts",
      "src/blocks/**/testing/**",
    ]);
    expect(JSON.parse(readFileSync(packageJson(dir), "utf8")).scripts.build).toBe("tsc -p tsconfig.build.json");
  });

  it("an existing build config gains the excludes; a solution-style one gets the fix as a message and is left alone", async () => {
    const dir = await initialised("express-nodenext");
    writeFileSync(
      path.join(dir, "tsconfig.build.json"),
      JSON.stringify({ extends: "./tsconfig.json", exclude: ["node_modules", "dist"] }),
    );
    edit(dir, (pkg) => (pkg.scripts = { build: "tsc -p tsconfig.build.json" }));
    await add(dir);
    expect(JSON.parse(readFileSync(path.join(dir, "tsconfig.build.json"), "utf8")).exclude).toContain(
      "src/blocks/**/*.test.ts",
    );

    const solution = await initialised("express-nodenext");
    writeFileSync(
      path.join(solution, "tsconfig.build.json"),
      JSON.stringify({ files: [], references: [{ path: "./tsconfig.app.json" }] }),
    );
    edit(solution, (pkg) => (pkg.scripts = { build: "tsc -p tsconfig.build.json" }));
    const result = await add(solution);
    expect(result.build).toMatchObject({ kind: "manual", message: expect.stringContaining("solution-style") });
    expect(readFileSync(path.join(solution, "tsconfig.build.json"), "utf8")).not.toContain("test");
  });

  it("with no build script nothing is edited, and the output says why", async () => {
    const result = await add(await initialised());
    expect(result.build).toMatchObject({ kind: "none", message: expect.stringContaining("no build script") });
  });

  it("never replaces the wiring module the user owns", async () => {
    const dir = await initialised();
    await add(dir);
    writeFileSync(path.join(dir, "src/idempotency-setup.ts"), "// mine\n");
    const again = await add(dir, { overwrite: true });
    expect(again.files.map((file) => file.target)).not.toContain("src/idempotency-setup.ts");
    expect(readFileSync(path.join(dir, "src/idempotency-setup.ts"), "utf8")).toBe("// mine\n");
  });

  it("renders the README's snippets in the project's import style", async () => {
    const hono = await initialised();
    await add(hono);
    const readme = readFileSync(path.join(hono, "src/blocks/idempotency/README.md"), "utf8");
    expect(readme).toContain('from "~/blocks/idempotency";');
    expect(readme).toContain('from "~/blocks/idempotency/adapters/hono";');
    expect(readme).not.toContain('from "@/blocks/idempotency";');
    const nodenext = await initialised("express-nodenext");
    await add(nodenext);
    expect(readFileSync(path.join(nodenext, "src/blocks/idempotency/README.md"), "utf8")).toContain(
      'from "@/blocks/idempotency/index.js";',
    );
  });

  it("without an alias, under NodeNext, every import of every vendored .md's snippets is relative with .js, other blocks' files included", async () => {
    const dir = tempProject("express-nodenext");
    await runInit({ cwd: dir, yes: true, alias: "none" });
    const result = await add(dir);
    const docs = result.files.map((file) => file.target).filter((target) => target.endsWith(".md"));
    expect(docs).toEqual(
      expect.arrayContaining(["src/blocks/idempotency/README.md", "src/blocks/idempotency/TRANSACTIONS.md"]),
    );
    const specifiers = docs.flatMap((doc) =>
      [...readFileSync(path.join(dir, doc), "utf8").matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)].flatMap((block) =>
        [...(block[1] ?? "").matchAll(/\bfrom "([^"]+)"/g)].map((match) => match[1] as string),
      ),
    );
    const local = specifiers.filter((specifier) => specifier.startsWith(".") || specifier.startsWith("@/"));
    expect(local).toEqual(
      expect.arrayContaining([
        "./blocks/logger/index.js",
        "./blocks/error-handler/adapters/express.js",
        "./blocks/idempotency/index.js",
      ]),
    );
    expect(local.filter((specifier) => !/^\.\.?\/.*\.js$/.test(specifier))).toEqual([]);
    // Setup step 2 shows pg whatever the client: it says so and where each client's lines are.
    const readme = readFileSync(path.join(dir, "src/blocks/idempotency/README.md"), "utf8");
    const setup = readme.slice(readme.indexOf("2. Build one handler"), readme.indexOf("3. Protect routes"));
    expect(setup).toMatch(/`pg`[\s\S]*TRANSACTIONS\.md/);
  });
});
