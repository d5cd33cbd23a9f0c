// Issue 12, points 10-12 and 18: the CLI writes only inside the project and pastes only a plain alias into code.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runInit } from "../../cli/commands/init.js";
import { runMigrate } from "../../cli/commands/migrate.js";
import { checkConfig } from "../../cli/config/blocks-config.js";
import { isModuleSpecifier } from "../../cli/config/module-specifier.js";
import { upSection } from "../../cli/migrate/apply-migration.js";
import { detectMigrations } from "../../cli/migrate/detect-layout.js";
import { rewriteSpecifier } from "../../cli/transforms/resolve-specifier.js";
import { insideProject } from "../../cli/utils/files.js";
import { rejection, tempProject } from "./helpers.js";

const config = (overrides: Record<string, unknown>) => ({
  dir: "src/blocks",
  alias: "~/blocks",
  moduleStyle: "extensionless",
  packageManager: "npm",
  database: { dialect: "postgresql", migrations: "migrations", layout: "sql" },
  ...overrides,
});

async function initialised(overrides: Record<string, unknown> = {}) {
  const dir = tempProject("hono-bundler");
  await runInit({ cwd: dir, yes: true });
  const current = JSON.parse(readFileSync(path.join(dir, "blocks.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(path.join(dir, "blocks.json"), JSON.stringify({ ...current, ...overrides }));
  return dir;
}

const outsideFolder = () => mkdtempSync(path.join(tmpdir(), "blocks-outside-"));

describe("write targets resolve through real paths (issue 12, points 10 and 11)", () => {
  it("a dangling symlink inside the project is refused, not followed to wherever it points", () => {
    const dir = tempProject("hono-bundler");
    const target = path.join(outsideFolder(), "created-through-the-link.ts");
    mkdirSync(path.join(dir, "src/blocks"), { recursive: true });
    symlinkSync(target, path.join(dir, "src/blocks/index.ts"));
    expect(() => insideProject(dir, "src/blocks/index.ts")).toThrow(/symlink to nothing/);
  });

  it("a symlinked folder that leads out of the project is refused", () => {
    const dir = tempProject("hono-bundler");
    symlinkSync(outsideFolder(), path.join(dir, "linked"));
    expect(() => insideProject(dir, "linked/file.ts")).toThrow(/symlink that leads to/);
    expect(() => insideProject(dir, "../elsewhere.ts")).toThrow(/outside the project/);
  });

  it("add refuses a symlinked migrations folder that leads out, and writes nothing", async () => {
    const dir = await initialised();
    const outside = outsideFolder();
    symlinkSync(outside, path.join(dir, "migrations"));
    const error = await rejection(runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false }));
    expect(error.code).toBe("TARGET_OUTSIDE_PROJECT");
    expect(existsSync(path.join(dir, "src/blocks/idempotency"))).toBe(false);
  });

  it("blocks.json paths with ../ are refused with a clear error naming the field", () => {
    expect(() => checkConfig(config({ dir: "../shared/blocks" }))).toThrow(
      /"dir" must be a folder inside the project, without "..\/"/,
    );
    expect(() =>
      checkConfig(config({ database: { dialect: "postgresql", migrations: "db/../../x", layout: "sql" } })),
    ).toThrow(/"database.migrations"/);
  });

  it("add refuses a blocks.json migrations folder outside the project (and its drizzle journal)", async () => {
    const dir = await initialised({
      database: { dialect: "postgresql", migrations: "../migrations", layout: "drizzle" },
    });
    const error = await rejection(runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false }));
    expect(error.code).toBe("INVALID_CONFIG");
    expect(existsSync(path.join(path.dirname(dir), "migrations"))).toBe(false);
  });

  it("a node-pg-migrate -m folder outside the project is refused by migrate, as by add", async () => {
    const dir = tempProject("hono-bundler");
    const scripts = { migrate: "node-pg-migrate -m ../shared-migrations up" };
    expect(() => detectMigrations(dir, new Set(["node-pg-migrate"]), scripts)).toThrow(/outside the project/);
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({ ...pkg, scripts, devDependencies: { "node-pg-migrate": "^7" } }),
    );
    expect((await rejection(runMigrate({ cwd: dir }))).code).toBe("TARGET_OUTSIDE_PROJECT");
    expect(
      detectMigrations(dir, new Set(["node-pg-migrate"]), { migrate: "node-pg-migrate -m ./db/migrations up" })
        .migrations,
    ).toBe("db/migrations");
  });
});

describe("the import alias is a module specifier (issue 12, point 12)", () => {
  it("accepts the aliases projects use and refuses quotes, newlines, spaces and template syntax", () => {
    for (const alias of ["@/blocks", "~/blocks", "#blocks", "@app/blocks", "src/blocks"])
      expect(isModuleSpecifier(alias), alias).toBe(true);
    for (const alias of [
      '@/x"; process.exit(1); "',
      "@/x'",
      "@/x\nconsole.log(1)",
      "@/ x",
      "@/x`",
      "@/${x}",
      "./x",
      "@/x\\y",
    ]) {
      expect(isModuleSpecifier(alias), JSON.stringify(alias)).toBe(false);
    }
  });

  it("the import rewrite itself refuses to paste an alias that is not a module specifier", () => {
    const ctx = {
      from: { registryPath: "jobs/x.ts", block: "jobs", target: "src/jobs/x.ts" },
      planned: new Map([["idempotency/index.ts", { target: "src/blocks/idempotency/index.ts", block: "idempotency" }]]),
      blocksDir: "src/blocks",
      moduleStyle: "extensionless" as const,
    };
    expect(rewriteSpecifier("@/blocks/idempotency", { ...ctx, alias: "~/blocks" })).toBe("~/blocks/idempotency");
    expect(() => rewriteSpecifier("@/blocks/idempotency", { ...ctx, alias: '~/blocks"; evil(); "' })).toThrow(
      /not a plain module specifier/,
    );
  });

  it("a quote in blocks.json's alias is refused before any file is written", async () => {
    const dir = await initialised({ alias: '~/blocks"; import("node:child_process"); "' });
    const error = await rejection(runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false }));
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.message).toContain('"alias"');
    expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
  });
});

describe("migrate --apply runs the migration file on disk (issue 12, point 18)", () => {
  it("runs only the Up section of a node-pg-migrate file", () => {
    expect(upSection("-- Up Migration\nCREATE TABLE a (x int);\n\n-- Down Migration\nDROP TABLE a;\n")).toBe(
      "-- Up Migration\nCREATE TABLE a (x int);\n\n",
    );
  });

  const url = process.env.DATABASE_URL;
  it.skipIf(!url)("[DATABASE_URL] a statement the user added to the file is applied", async () => {
    const table = `blocks_edit_${process.pid}`;
    const dir = tempProject("hono-bundler");
    const { written } = await runMigrate({ block: "idempotency", cwd: dir, table });
    const file = path.join(dir, written[0] ?? "");
    writeFileSync(file, `${readFileSync(file, "utf8")}\nCREATE TABLE IF NOT EXISTS ${table}_audit (id int);\n`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await runMigrate({ block: "idempotency", cwd: dir, table, apply: true });
      const { rows } = await client.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [
        `${table}_audit`,
      ]);
      expect(rows).toEqual([{ present: true }]);
    } finally {
      await client.query(`DROP TABLE IF EXISTS ${table}, ${table}_retries, ${table}_audit`);
      await client.end();
    }
  });
});

describe("an item's migration template may name any local file (issue 25, low)", () => {
  const TOKEN = "//registry.npmjs.org/:_authToken=npm_FAKE_TOKEN_0123456789";
  const savedHome = process.env.HOME;
  const home = outsideFolder();
  writeFileSync(path.join(home, ".npmrc"), `${TOKEN}\n`);
  beforeAll(() => {
    process.env.HOME = home;
  });
  afterAll(() => {
    process.env.HOME = savedHome;
  });

  /** A complete item (schema module and the migration as data) whose only fault is where its template points. */
  function itemNaming(template: string): string {
    const schema = `export const checkTableName = (t: string) => t;
export const schemaStatements = (t = "evil_records") => [\`CREATE TABLE IF NOT EXISTS \${t} (id int)\`];
export const dropStatements = (t: string) => [\`DROP TABLE IF EXISTS \${t}\`];
export const schemaTables = (t: string) => [t];
`;
    const migration = {
      table: "evil_records",
      schema: "evil/schema.ts",
      sql: {
        maxNameLength: 40,
        statements: ["CREATE TABLE IF NOT EXISTS {{table}} (id int)"],
        drop: ["DROP TABLE IF EXISTS {{table}}"],
        tables: ["{{table}}"],
      },
      template,
    };
    const file = path.join(outsideFolder(), "evil.json");
    const files = [
      {
        path: "registry/evil/schema.ts",
        type: "registry:file",
        content: schema,
        target: "~/src/blocks/evil/schema.ts",
      },
    ];
    writeFileSync(
      file,
      JSON.stringify({
        name: "evil",
        type: "registry:item",
        files,
        meta: { blocks: { version: 1, dir: "src/blocks", files: [], migration } },
      }),
    );
    return file;
  }

  const copiedToken = (dir: string) =>
    existsSync(path.join(dir, "migrations")) &&
    readdirSync(path.join(dir, "migrations"), { recursive: true }).some((name) => {
      const file = path.join(dir, "migrations", String(name));
      return statSync(file).isFile() && readFileSync(file, "utf8").includes("npm_FAKE_TOKEN");
    });

  it.each([
    ["an absolute path", () => path.join(home, ".npmrc")],
    ["a ../ path", () => `${"../".repeat(12)}${home.slice(1)}/.npmrc`],
    ["a ~ path", () => "~/.npmrc"],
    ["a path inside the item that climbs out", () => "evil/../../../../../../../../../.npmrc"],
    ["a path to no file of the item", () => "evil/missing.sql"],
  ])("a template named by %s is refused, and nothing is copied", async (_, template) => {
    const dir = await initialised();
    const error = await rejection(runAdd({ blocks: [itemNaming(template())], cwd: dir, yes: true, install: false }));
    expect(error.code).toBe("INVALID_REGISTRY");
    expect(error.message).toContain("template");
    expect(copiedToken(dir)).toBe(false);
    expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
  });
});
