// `add idempotency` in TypeORM and Knex projects (issue 26.4): the client is detected, only its adapter is copied,
// the wiring type-checks under strict settings in each module system, and (DATABASE_URL) its own test runs.
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ESLint } from "eslint";
import { execa } from "execa";
import pg from "pg";
import tseslint from "typescript-eslint";
import { afterAll, describe, expect, it, vi } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { configureOutput } from "../../cli/utils/logger.js";
import { sampleProject, typeCheck } from "./wiring-projects.js";

const BLOCK = "src/blocks/idempotency";
const ADAPTERS = ["pg", "pglite", "postgres-js", "drizzle", "prisma", "kysely", "typeorm", "knex"];
const SETUP = `${BLOCK}/setup`;

/** What `add` writes for the wiring: the app's two files and the block's setup folder (the chosen variants, their composition, the wiring's test setup/database.test.ts). */
function wiringFiles(dir: string): string[] {
  const setup = readdirSync(path.join(dir, SETUP), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => `${SETUP}/${file.split(path.sep).join("/")}`);
  return ["src/idempotency-setup.ts", "src/jobs/idempotency-maintenance.ts", ...setup.sort()];
}

/** The app's setup only re-exports the block's; the client is the version of setup/database.ts `add` chose, recorded in the lock. */
function expectWiring(dir: string, orm: { variant: string; expected: string[] }) {
  const read = (file: string) => readFileSync(path.join(dir, file), "utf8");
  expect(read("src/idempotency-setup.ts")).toMatch(/^export \* from "\.\/blocks\/idempotency\/setup\/index(\.js)?";$/m);
  const lock = JSON.parse(read("blocks.lock.json")) as {
    blocks: { idempotency: { variants: Record<string, string>; files: Record<string, string> } };
  };
  expect(lock.blocks.idempotency.variants["idempotency/setup/database.ts"]).toBe(`idempotency/setup/${orm.variant}`);
  expect(lock.blocks.idempotency.files).toHaveProperty([`${SETUP}/database.ts`]);
  const database = read(`${SETUP}/database.ts`);
  for (const line of orm.expected) expect(database).toContain(line);
}

const ORMS = [
  {
    name: "TypeORM",
    packages: ["typeorm", "pg", "reflect-metadata"],
    feature: "client-typeorm",
    adapter: "typeorm",
    variant: "database-typeorm.ts",
    expected: [
      'from "typeorm";',
      "typeormClient(db)",
      "db.createQueryRunner()",
      "export type Transaction = EntityManager;",
    ],
    app: [
      'import { DataSource } from "typeorm";',
      'createIdempotency({ db: new DataSource({ type: "postgres", url: "postgres://localhost/app" }) });',
    ],
  },
  {
    name: "Knex",
    packages: ["knex", "pg"],
    feature: "client-knex",
    adapter: "knex",
    variant: "database-knex.ts",
    expected: [
      'from "knex";',
      "knexClient(db)",
      "pool.acquireConnection()",
      "export type Transaction = Knex.Transaction;",
    ],
    app: [
      'import knex from "knex";',
      'createIdempotency({ db: knex({ client: "pg", connection: "postgres://localhost/app" }) });',
    ],
  },
];

describe.each([
  { fixture: "express-nodenext", setupImport: "./idempotency-setup.js" },
  { fixture: "fastify-commonjs", setupImport: "./idempotency-setup" },
  { fixture: "hono-bundler", setupImport: "./idempotency-setup" },
])("add idempotency in a $fixture project", ({ fixture, setupImport }) => {
  it.each(ORMS)(
    "$name: detected, only its adapter copied, the wiring type-checks with the app's own client",
    async (orm) => {
      const dir = await sampleProject(fixture, orm.packages);
      const result = await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
      expect(result.features).toEqual(expect.arrayContaining([orm.feature, "postgres-store"]));
      expect(result.features).not.toContain("client-pg");
      const targets = result.files.map((file) => file.target);
      for (const adapter of ADAPTERS) {
        const file = `${BLOCK}/stores/clients/${adapter}.ts`;
        if (adapter === orm.adapter) expect(targets).toContain(file);
        else expect(targets).not.toContain(file);
      }
      expectWiring(dir, orm);
      // Only the chosen version of the wiring's client is copied (at setup/database.ts), never the other clients' versions.
      expect(targets.filter((target) => target.startsWith(`${SETUP}/database-`))).toEqual([]);
      const app = path.join(dir, "src/app-client.ts");
      writeFileSync(app, [`import { createIdempotency } from "${setupImport}";`, ...orm.app, ""].join("\n"));
      const files = wiringFiles(dir);
      expect(files).toContain(`${SETUP}/database.test.ts`);
      expect(typeCheck(dir, [...files, "src/app-client.ts"])).toEqual([]);
    },
    120_000,
  );
});

describe("add idempotency next to a library it has no adapter for", () => {
  it("names it, says it wired pg with a pool of its own and why, and how to choose otherwise (regression: a TypeORM project silently got a second pool)", async () => {
    const dir = await sampleProject("hono-bundler", ["pg"]);
    // Declared only: `add` reads package.json, and sequelize is not installed here.
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    pkg.dependencies.sequelize = "^6.37.0";
    writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
    configureOutput({ silent: false });
    const out: string[] = [];
    for (const stream of [process.stdout, process.stderr])
      vi.spyOn(stream, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
    let result: Awaited<ReturnType<typeof runAdd>>;
    try {
      result = await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, dryRun: true });
    } finally {
      vi.restoreAllMocks();
      configureOutput({ silent: true });
    }
    expect(result.features).toContain("client-pg");
    expect(result.notes).toEqual([
      expect.stringMatching(
        /^found sequelize, which the idempotency block has no adapter for: its PostgreSQL store runs on pg .* pool of its own/,
      ),
    ]);
    expect(out.join("")).toContain("found sequelize");
    expect(out.join("")).toContain("--client (pg, postgres-js, drizzle, kysely, prisma, typeorm, knex)");
    // A client it has an adapter for, or one the user chose, needs no note.
    expect(
      (await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, dryRun: true, client: "pg" }))
        .notes,
    ).toEqual([]);
  }, 60_000);
});

// Found: the TypeORM wiring's lock handed out `sql.query` unbound, and Nest's `npm run lint` failed on the file `add` wrote.
describe("the wiring `add` writes for TypeORM and Knex under a type-checked lint (what `nest new` sets up)", () => {
  it.each(ORMS)(
    "$name: typescript-eslint's recommendedTypeChecked finds nothing in the wiring, its test or the client adapter",
    async (orm) => {
      const dir = await sampleProject("fastify-commonjs", orm.packages);
      await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
      const eslint = new ESLint({
        cwd: dir,
        overrideConfigFile: true,
        overrideConfig: [
          ...tseslint.configs.recommendedTypeChecked,
          { languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: dir } } },
        ],
      });
      expectWiring(dir, orm);
      const files = [...wiringFiles(dir), `${BLOCK}/stores/clients/${orm.adapter}.ts`];
      expect(files).toContain(`${SETUP}/database.test.ts`);
      const results = await eslint.lintFiles(files);
      expect(results.map((result) => path.relative(dir, result.filePath)).sort()).toEqual([...files].sort());
      const findings = results.flatMap((result) =>
        result.messages.map(
          (message) => `${path.relative(dir, result.filePath)}:${message.line} ${message.ruleId}: ${message.message}`,
        ),
      );
      expect(findings).toEqual([]);
    },
    120_000,
  );
});

/** Every other client's wiring under the preset most projects lint with (the trial's Kysely wiring failed it on `any`). */
const WIRED_CLIENTS = [
  { name: "pg", packages: ["pg"] },
  { name: "Kysely", packages: ["kysely", "pg"] },
  { name: "Drizzle", packages: ["drizzle-orm", "pg"] },
  { name: "postgres.js", packages: ["postgres"] },
  { name: "Drizzle on MySQL", packages: ["drizzle-orm", "mysql2"] },
  { name: "Kysely on MySQL", packages: ["kysely", "mysql2"] },
];

describe("the wiring add writes, under typescript-eslint's recommended preset", () => {
  it.each(WIRED_CLIENTS)(
    "$name: no finding in the wiring or its test",
    async ({ packages }) => {
      const dir = await sampleProject("fastify-commonjs", packages);
      await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
      const eslint = new ESLint({
        cwd: dir,
        overrideConfigFile: true,
        overrideConfig: [...tseslint.configs.recommended],
      });
      const files = wiringFiles(dir);
      expect(files).toContain(`${SETUP}/database.test.ts`);
      const results = await eslint.lintFiles(files);
      expect(results).toHaveLength(files.length);
      const findings = results.flatMap((result) =>
        result.messages.map(
          (message) => `${path.relative(dir, result.filePath)}:${message.line} ${message.ruleId}: ${message.message}`,
        ),
      );
      expect(findings).toEqual([]);
    },
    120_000,
  );
});

const DATABASE_URL = process.env.DATABASE_URL;

describe("the wiring's own test in a TypeORM or Knex project, against PostgreSQL", () => {
  const tables: string[] = [];
  afterAll(async () => {
    if (!DATABASE_URL || tables.length === 0) return;
    const pool = new pg.Pool({ connectionString: DATABASE_URL });
    for (const table of tables) await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries`);
    await pool.end();
  });

  it.runIf(DATABASE_URL).each(ORMS)(
    "[DATABASE_URL] $name: the wiring runs once per key, in a transaction too, maintains and closes",
    async (orm) => {
      const dir = await sampleProject("hono-bundler", orm.packages);
      const table = `wiring_${randomUUID().slice(0, 8)}`;
      tables.push(table);
      await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false, table });
      expectWiring(dir, orm);
      expect(readFileSync(path.join(dir, SETUP, "table.ts"), "utf8")).toContain(
        `export const IDEMPOTENCY_TABLE: string = "${table}";`,
      );
      const vitest = path.join(dir, "node_modules/vitest/vitest.mjs");
      const run = await execa("node", [vitest, "run", `${SETUP}/database.test.ts`, "--testTimeout=60000"], {
        cwd: dir,
        reject: false,
        env: { DATABASE_URL, REDIS_URL: undefined, NO_COLOR: "1" },
      });
      expect(run.exitCode, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0);
      expect(run.stdout).toMatch(/Tests\s+1 passed/);
    },
    120_000,
  );
});
