// Finds how the project keeps its migrations (Prisma, drizzle-kit, node-pg-migrate or a plain SQL folder).
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { MigrationLayout } from "../config/blocks-config.js";

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
    return { layout: "drizzle", migrations: out ?? "drizzle" };
  }
  if (declared.has("node-pg-migrate")) {
    const flag = Object.values(scripts)
      .map((script) => /node-pg-migrate.*?(?:-m|--migrations-dir)[ =]["']?([^\s"']+)/.exec(script)?.[1])
      .find(Boolean);
    return { layout: "node-pg-migrate", migrations: flag ?? "migrations" };
  }
  const folder = SQL_FOLDERS.find((candidate) => existsSync(path.join(root, candidate)));
  return { layout: "sql", migrations: folder ?? "migrations" };
}
