// Finds how the project keeps its migrations (Prisma, drizzle-kit, node-pg-migrate or a plain SQL folder), and on which database.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { DatabaseDialect, MigrationLayout } from "../config/blocks-config.js";
import { isInsideFolder } from "../config/module-specifier.js";
import { BlocksError } from "../utils/errors.js";
import { toPosix } from "../utils/files.js";

/** `dialect`: the database the layout's tool runs the folder on (unknown where only the layout was given). */
export type MigrationTarget = { layout: MigrationLayout; migrations: string; dialect?: DatabaseDialect };

const SQL_FOLDERS = [
  "migrations",
  "db/migrations",
  "database/migrations",
  "sql/migrations",
  "src/migrations",
  "supabase/migrations",
];
const DRIZZLE_CONFIGS = [
  "drizzle.config.ts",
  "drizzle.config.js",
  "drizzle.config.mjs",
  "drizzle.config.cjs",
  "drizzle.config.json",
];

/**
 * @example
 * detectMigrations("/app", declared); // { layout: "prisma", migrations: "prisma/migrations", dialect: "mysql" }
 */
export function detectMigrations(
  root: string,
  declared: Set<string>,
  scripts: Record<string, string> = {},
): Required<MigrationTarget> {
  const prismaSchema = path.join(root, "prisma", "schema.prisma");
  if (existsSync(prismaSchema) || declared.has("prisma")) {
    const provider = existsSync(prismaSchema)
      ? /^\s*provider\s*=\s*"(\w+)"/m.exec(datasourceBlock(readFileSync(prismaSchema, "utf8")))?.[1]
      : undefined;
    return {
      layout: "prisma",
      migrations: "prisma/migrations",
      dialect: dialectNamed(provider) ?? driverDialect(declared),
    };
  }
  const drizzleConfig = DRIZZLE_CONFIGS.find((file) => existsSync(path.join(root, file)));
  if (drizzleConfig || declared.has("drizzle-kit")) {
    const text = drizzleConfig ? readFileSync(path.join(root, drizzleConfig), "utf8") : "";
    const out = /["']?out["']?\s*:\s*["'`]\.?\/?([^"'`]+?)\/?["'`]/.exec(text)?.[1];
    const dialect = /["']?dialect["']?\s*:\s*["'`](\w+)["'`]/.exec(text)?.[1];
    return {
      layout: "drizzle",
      migrations: projectFolder(root, out ?? "drizzle", `the "out" folder of ${drizzleConfig ?? "drizzle.config"}`),
      dialect: dialectNamed(dialect) ?? driverDialect(declared),
    };
  }
  if (declared.has("node-pg-migrate")) {
    const flag = Object.values(scripts)
      .map((script) => /node-pg-migrate.*?(?:-m|--migrations-dir)[ =]["']?([^\s"']+)/.exec(script)?.[1])
      .find(Boolean);
    return {
      layout: "node-pg-migrate",
      migrations: projectFolder(root, flag ?? "migrations", "the node-pg-migrate -m folder of a package.json script"),
      dialect: "postgresql",
    };
  }
  const folder = SQL_FOLDERS.find((candidate) => existsSync(path.join(root, candidate)));
  return { layout: "sql", migrations: folder ?? "migrations", dialect: driverDialect(declared) };
}

/** The names Prisma's `provider` and drizzle-kit's `dialect` give each database. */
const DIALECT_NAMES: Record<string, DatabaseDialect> = {
  postgresql: "postgresql",
  postgres: "postgresql",
  cockroachdb: "postgresql",
  mysql: "mysql",
  sqlite: "sqlite",
  turso: "sqlite",
};

function dialectNamed(name: string | undefined): DatabaseDialect | undefined {
  return name === undefined ? undefined : DIALECT_NAMES[name];
}

/** A project whose only database driver is MySQL's or SQLite's is on that database; any other is PostgreSQL. */
const DRIVERS: Array<[DatabaseDialect, string[]]> = [
  ["postgresql", ["pg", "postgres", "@neondatabase/serverless", "@vercel/postgres", "@electric-sql/pglite"]],
  ["mysql", ["mysql2", "mysql", "@planetscale/database"]],
  ["sqlite", ["better-sqlite3", "@libsql/client"]],
];

function driverDialect(declared: Set<string>): DatabaseDialect {
  const found = DRIVERS.filter(([, packages]) => packages.some((name) => declared.has(name))).map(
    ([dialect]) => dialect,
  );
  return found.length === 1 && found[0] ? found[0] : "postgresql";
}

/** The `datasource` block of a schema.prisma (a generator's `provider` is not the database). */
function datasourceBlock(schema: string): string {
  return /^\s*datasource\s+\w+\s*\{([^}]*)\}/m.exec(schema)?.[1] ?? "";
}

/** A folder taken from the project's own scripts is still refused when it leads outside the project. */
function projectFolder(root: string, folder: string, origin: string): string {
  const relative = path.relative(root, path.resolve(root, folder));
  if (!isInsideFolder(relative) || relative === "") {
    throw new BlocksError(
      "TARGET_OUTSIDE_PROJECT",
      `Refusing the migrations folder ${folder} (${origin}): it is outside the project at ${root}.`,
      {
        suggestion:
          'Set "database.migrations" in blocks.json to a folder inside the project, or write the migration with `blocks migrate --print > file.sql`.',
      },
    );
  }
  return toPosix(relative);
}
