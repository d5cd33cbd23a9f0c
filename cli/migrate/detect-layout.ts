// Finds how the project keeps its migrations (Prisma, drizzle-kit, node-pg-migrate or a plain SQL folder).
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { MigrationLayout } from "../config/blocks-config.js";
import { isInsideFolder } from "../config/module-specifier.js";
import { BlocksError } from "../utils/errors.js";
import { toPosix } from "../utils/files.js";

export type MigrationTarget = { layout: MigrationLayout; migrations: string };

const SQL_FOLDERS = ["migrations", "db/migrations", "database/migrations", "sql/migrations", "src/migrations", "supabase/migrations"];
const DRIZZLE_CONFIGS = ["drizzle.config.ts", "drizzle.config.js", "drizzle.config.mjs", "drizzle.config.cjs", "drizzle.config.json"];

/**
 * @example
 * detectMigrations("/app", declared); // { layout: "prisma", migrations: "prisma/migrations" }
 */
export function detectMigrations(root: string, declared: Set<string>, scripts: Record<string, string> = {}): MigrationTarget {
  if (existsSync(path.join(root, "prisma", "schema.prisma")) || declared.has("prisma")) {
    return { layout: "prisma", migrations: "prisma/migrations" };
  }
  const drizzleConfig = DRIZZLE_CONFIGS.find((file) => existsSync(path.join(root, file)));
  if (drizzleConfig || declared.has("drizzle-kit")) {
    const text = drizzleConfig ? readFileSync(path.join(root, drizzleConfig), "utf8") : "";
    const out = /["']?out["']?\s*:\s*["'`]\.?\/?([^"'`]+?)\/?["'`]/.exec(text)?.[1];
    return { layout: "drizzle", migrations: projectFolder(root, out ?? "drizzle", `the "out" folder of ${drizzleConfig ?? "drizzle.config"}`) };
  }
  if (declared.has("node-pg-migrate")) {
    const flag = Object.values(scripts)
      .map((script) => /node-pg-migrate.*?(?:-m|--migrations-dir)[ =]["']?([^\s"']+)/.exec(script)?.[1])
      .find(Boolean);
    return { layout: "node-pg-migrate", migrations: projectFolder(root, flag ?? "migrations", "the node-pg-migrate -m folder of a package.json script") };
  }
  const folder = SQL_FOLDERS.find((candidate) => existsSync(path.join(root, candidate)));
  return { layout: "sql", migrations: folder ?? "migrations" };
}

/** A folder taken from the project's own scripts is still refused when it leads outside the project. */
function projectFolder(root: string, folder: string, origin: string): string {
  const relative = path.relative(root, path.resolve(root, folder));
  if (!isInsideFolder(relative) || relative === "") {
    throw new BlocksError("TARGET_OUTSIDE_PROJECT", `Refusing the migrations folder ${folder} (${origin}): it is outside the project at ${root}.`, {
      suggestion: 'Set "database.migrations" in blocks.json to a folder inside the project, or write the migration with `blocks migrate --print > file.sql`.',
    });
  }
  return toPosix(relative);
}
