// No client becomes a dependency of a project that does not use it: `add idempotency` on postgres.js (alone or
// under Drizzle) plans no pg, @types/pg or PGlite, copies no file importing them, and the project type-checks and
// runs its vendored maintenance test without them; Kysely and Prisma get the pg their wiring opens; pg is unchanged;
// a client chosen with --client that the project lacks is installed.
import { mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { sampleProject, typeCheck } from "./wiring-projects.js";

const REPO = path.resolve(import.meta.dirname, "../..");
const BLOCK = "src/blocks/idempotency";
const PG_PACKAGES = ["pg", "@types/pg", "@electric-sql/pglite", "@types/emscripten"];
/** The files of the pg client: its adapter, PGlite's, and their test of the maintenance lock on real PostgreSQL. */
const PG_FILES = ["stores/clients/pg.ts", "testing/pglite.ts", "stores/clients/pg.test.ts"].map(
  (file) => `${BLOCK}/${file}`,
);

const add = (cwd: string, options: Partial<Parameters<typeof runAdd>[0]> = {}) =>
  runAdd({ blocks: ["idempotency"], cwd, yes: true, install: false, ...options });
/** The wiring's database: the vendored setup/database.ts, the version of it for the project's client. */
const setupOf = (dir: string) => readFileSync(path.join(dir, BLOCK, "setup/database.ts"), "utf8");
/** The version of setup/database.ts the lock records. */
const variantOf = (dir: string) =>
  (
    JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")) as {
      blocks: Record<string, { variants?: Record<string, string> }>;
    }
  ).blocks.idempotency?.variants?.["idempotency/setup/database.ts"];

/** Every package name in a plan, without its range. */
const planned = (result: Awaited<ReturnType<typeof add>>) =>
  [...result.dependencies.dependencies, ...result.dependencies.devDependencies].map((entry) =>
    entry.slice(0, entry.lastIndexOf("@")),
  );

/** The packages a file imports (static, re-exported and dynamic imports). */
function importedPackages(text: string): string[] {
  const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)["']([^"'.][^"']*)["']/gm)].map(
    (match) => match[1] as string,
  );
  return specifiers.map((specifier) =>
    specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : (specifier.split("/")[0] as string),
  );
}

/**
 * The project's node_modules without `missing`: the repo's packages linked one by one, so that an import of a
 * missing package fails the type check and the test run, as it would in a project that never installed it.
 */
function installedWithout(dir: string, missing: string[]) {
  const modules = path.join(dir, "node_modules");
  rmSync(modules, { recursive: true, force: true });
  mkdirSync(modules);
  for (const entry of readdirSync(path.join(REPO, "node_modules"))) {
    if (!entry.startsWith("@")) {
      if (!missing.includes(entry))
        symlinkSync(path.join(REPO, "node_modules", entry), path.join(modules, entry), "dir");
      continue;
    }
    mkdirSync(path.join(modules, entry));
    for (const name of readdirSync(path.join(REPO, "node_modules", entry))) {
      if (!missing.includes(`${entry}/${name}`))
        symlinkSync(path.join(REPO, "node_modules", entry, name), path.join(modules, entry, name), "dir");
    }
  }
}

const NOT_PG = [
  {
    name: "postgres.js",
    packages: ["postgres"],
    client: "postgresJsClient(db)",
    variant: "idempotency/setup/database-postgres-js.ts",
  },
  {
    name: "Drizzle on postgres.js",
    packages: ["drizzle-orm", "postgres"],
    client: "drizzleClient(db)",
    variant: "idempotency/setup/database-drizzle-postgres-js.ts",
  },
];

describe("blocks add idempotency on a client other than pg", () => {
  it.each(NOT_PG)(
    "$name: no pg, @types/pg or PGlite planned or imported; the project type-checks and runs its maintenance test without them",
    async ({ packages, client, variant }) => {
      const dir = await sampleProject("hono-bundler", packages);
      installedWithout(dir, PG_PACKAGES);
      const result = await add(dir);
      expect(result.features).toContain("postgres-store");
      expect(result.features).not.toContain("client-pg");
      for (const name of PG_PACKAGES) expect(planned(result)).not.toContain(name);

      const targets = result.files.map((file) => file.target);
      for (const file of PG_FILES) expect(targets).not.toContain(file);
      expect(targets).toEqual(
        expect.arrayContaining([
          `${BLOCK}/maintenance.ts`,
          `${BLOCK}/maintenance.test.ts`,
          `${BLOCK}/setup/database.ts`,
          "src/idempotency-setup.ts",
        ]),
      );
      for (const target of targets.filter((file) => file.endsWith(".ts"))) {
        const imported = importedPackages(readFileSync(path.join(dir, target), "utf8"));
        for (const name of PG_PACKAGES) expect(imported, `${target} imports ${name}`).not.toContain(name);
      }
      expect(variantOf(dir)).toBe(variant);
      expect(setupOf(dir)).toContain(client);

      // Every file of the project, the vendored tests included, with pg, @types/pg and PGlite not installed.
      expect(typeCheck(dir)).toEqual([]);
      const vitest = path.join(dir, "node_modules/vitest/vitest.mjs");
      const run = await execa("node", [vitest, "run", `${BLOCK}/maintenance.test.ts`], {
        cwd: dir,
        reject: false,
        env: { NO_COLOR: "1" },
      });
      expect(run.exitCode, `${run.stdout}\n${run.stderr}`.slice(-3000)).toBe(0);
      expect(run.stdout).toMatch(/Tests\s+5 passed/);
    },
    180_000,
  );

  it.each([
    { name: "Kysely", packages: ["kysely"] },
    { name: "Prisma", packages: ["@prisma/client"] },
  ])(
    "$name: its wiring opens a pg Pool, so pg and @types/pg come (when not declared), but neither PGlite nor the pg client's files",
    async ({ packages }) => {
      const result = await add(await sampleProject("hono-bundler", packages));
      expect(result.dependencies.dependencies).toContain("pg@^8.23.1");
      expect(result.dependencies.devDependencies).toContain("@types/pg@^8.23.1");
      expect(planned(result)).not.toContain("@electric-sql/pglite");
      const targets = result.files.map((file) => file.target);
      for (const file of PG_FILES) expect(targets).not.toContain(file);

      const declaringPg = await add(await sampleProject("hono-bundler", [...packages, "pg"]));
      expect(planned(declaringPg)).not.toContain("pg");
      expect(declaringPg.dependencies.devDependencies).toContain("@types/pg@^8.23.1");
    },
    60_000,
  );
});

describe("blocks add idempotency --client <name> on a project without that client", () => {
  it.each([
    { client: "postgres-js", packages: ["postgres@^4.1.0"] },
    { client: "kysely", packages: ["kysely@^0.28.19", "pg@^8.23.1"] },
    { client: "drizzle", packages: ["drizzle-orm@^0.45.4", "pg@^8.23.1"] },
    { client: "prisma", packages: ["@prisma/adapter-pg@^7.10.0", "@prisma/client@^7.10.0", "pg@^8.23.1"] },
  ])(
    "--client $client installs the client it wires, as a runtime dependency",
    async ({ client, packages }) => {
      const result = await add(await sampleProject("hono-bundler", []), { client });
      expect(result.dependencies.dependencies).toEqual(expect.arrayContaining(packages));
      expect(planned(result)).not.toContain("@electric-sql/pglite");
    },
    60_000,
  );
});

describe("blocks add idempotency on pg, the default client", () => {
  it.each([
    { name: "no client declared", packages: [] },
    { name: "pg declared", packages: ["pg"] },
  ])(
    "$name: pg, @types/pg and PGlite as before, with the pg client's files",
    async ({ packages }) => {
      const dir = await sampleProject("hono-bundler", packages);
      const result = await add(dir);
      expect(result.features).toEqual(["client-pg", "postgres-store"]);
      expect(result.dependencies.dependencies).toEqual(packages.includes("pg") ? [] : ["pg@^8.23.1"]);
      expect(result.dependencies.devDependencies).toEqual(
        expect.arrayContaining(["@electric-sql/pglite@^0.5.17", "@types/pg@^8.23.1"]),
      );
      expect(result.files.map((file) => file.target)).toEqual(expect.arrayContaining(PG_FILES));
      expect(variantOf(dir)).toBe("idempotency/setup/database-pg.ts");
      expect(setupOf(dir)).toContain("pgClient(db)");
    },
    60_000,
  );

  it("--client none on a postgres.js project wires pg, and brings its packages and files; --client pg says the same", async () => {
    for (const flag of ["none", "pg"]) {
      const dir = await sampleProject("hono-bundler", ["postgres"]);
      const result = await add(dir, { client: flag });
      expect(result.features).toEqual(["client-pg", "postgres-store"]);
      expect(result.dependencies.dependencies).toEqual(["pg@^8.23.1"]);
      expect(result.files.map((file) => file.target)).toEqual(expect.arrayContaining(PG_FILES));
      expect(variantOf(dir)).toBe("idempotency/setup/database-pg.ts");
      expect(setupOf(dir)).toContain("pgClient(db)");
    }
  }, 60_000);
});
