// blocks.json: where blocks go and how they import, written by `init` and read by every other command.
import path from "node:path";
import { BlocksError } from "../utils/errors.js";
import { readIfExists } from "../utils/files.js";
import { isInsideFolder, isModuleSpecifier } from "./module-specifier.js";
import { isPackageManager, type PackageManager } from "../project/package-manager.js";
import type { ModuleStyle } from "../project/tsconfig.js";
import { checkRegistries, type RegistryConfig } from "../registry/registries-config.js";

export const CONFIG_FILE = "blocks.json";
export const MIGRATION_LAYOUTS = ["sql", "node-pg-migrate", "drizzle", "prisma"] as const;
export type MigrationLayout = (typeof MIGRATION_LAYOUTS)[number];
/** The project's database, whose migrations the layout's tool runs: a Drizzle or Prisma folder belongs to one. */
export const DATABASE_DIALECTS = ["postgresql", "mysql", "sqlite"] as const;
export type DatabaseDialect = (typeof DATABASE_DIALECTS)[number];

export type BlocksConfig = {
  /** Project-relative folder the blocks are copied into, e.g. "src/blocks". */
  dir: string;
  /** Import alias of `dir` from tsconfig paths (e.g. "@/blocks"), or null for relative imports. */
  alias: string | null;
  /** "nodenext": relative imports end in `.js`; "extensionless": they don't. */
  moduleStyle: ModuleStyle;
  packageManager: PackageManager;
  database: { dialect: DatabaseDialect; migrations: string; layout: MigrationLayout };
  /** Namespaced registries (`@acme`) that `add`, `search` and `view` read items from. */
  registries?: Record<string, RegistryConfig>;
};

/**
 * @example
 * const config = await readConfig("/app"); // throws MISSING_CONFIG before `blocks init`
 */
export async function readConfig(root: string): Promise<BlocksConfig> {
  const file = path.join(root, CONFIG_FILE);
  const text = await readIfExists(file);
  if (text === undefined) {
    throw new BlocksError("MISSING_CONFIG", `No ${CONFIG_FILE} in ${root}.`, {
      suggestion: "Run `blocks init` first (add --yes to accept the detected settings).",
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw invalid(`${CONFIG_FILE} is not valid JSON.`, cause);
  }
  return checkConfig(raw);
}

/**
 * Validates a parsed blocks.json, naming the first field that is wrong.
 *
 * @example
 * checkConfig({ dir: "/etc" }); // throws INVALID_CONFIG naming "dir"
 */
export function checkConfig(raw: unknown): BlocksConfig {
  const config = raw as Partial<BlocksConfig> | null;
  if (typeof config !== "object" || config === null) throw invalid(`${CONFIG_FILE} must hold a JSON object.`);
  if (typeof config.dir !== "string" || !isInsideFolder(config.dir) || path.isAbsolute(config.dir)) {
    throw invalid(
      `"dir" must be a folder inside the project, without "../", e.g. "src/blocks" (got ${JSON.stringify(config.dir)}).`,
    );
  }
  if (
    config.alias !== null &&
    (typeof config.alias !== "string" || config.alias.endsWith("/") || !isModuleSpecifier(config.alias))
  ) {
    throw invalid(
      `"alias" must be an import prefix such as "@/blocks" (letters, digits, "@", "~", "#", "/", "-", "_", "."; no quotes, spaces or trailing slash), or null (got ${JSON.stringify(config.alias)}).`,
    );
  }
  if (config.moduleStyle !== "nodenext" && config.moduleStyle !== "extensionless") {
    throw invalid(`"moduleStyle" must be "nodenext" or "extensionless".`);
  }
  if (!isPackageManager(config.packageManager)) throw invalid(`"packageManager" must be npm, pnpm, yarn or bun.`);
  checkDatabase(config.database);
  // "@oss": "https://..." is short for { "url": "https://..." }: every reader sees the long form.
  return (
    config.registries === undefined ? config : { ...config, registries: checkRegistries(config.registries) }
  ) as BlocksConfig;
}

const quoted = (values: readonly string[]) => values.map((value) => `"${value}"`).join(" | ");

function checkDatabase(database: Partial<BlocksConfig["database"]> | undefined): void {
  if (typeof database !== "object" || database === null) {
    throw invalid(
      `"database" must be { "dialect": ${quoted(DATABASE_DIALECTS)}, "migrations": "<folder>", "layout": ${quoted(MIGRATION_LAYOUTS)} }.`,
    );
  }
  if (!DATABASE_DIALECTS.includes(database.dialect as DatabaseDialect)) {
    throw invalid(`"database.dialect" must be ${quoted(DATABASE_DIALECTS)} (got ${JSON.stringify(database.dialect)}).`);
  }
  if (!MIGRATION_LAYOUTS.includes(database.layout as MigrationLayout)) {
    throw invalid(`"database.layout" must be ${quoted(MIGRATION_LAYOUTS)} (got ${JSON.stringify(database.layout)}).`);
  }
  if (database.layout === "node-pg-migrate" && database.dialect !== "postgresql") {
    throw invalid(
      `"database.layout": "node-pg-migrate" runs on PostgreSQL only, and "database.dialect" is "${database.dialect}": use "sql", "drizzle" or "prisma".`,
    );
  }
  if (typeof database.migrations !== "string" || !isInsideFolder(database.migrations)) {
    throw invalid(
      `"database.migrations" must be a folder inside the project, without "../" (got ${JSON.stringify(database.migrations)}).`,
    );
  }
}

function invalid(message: string, cause?: unknown): BlocksError {
  return new BlocksError("INVALID_CONFIG", `Invalid ${CONFIG_FILE}: ${message}`, {
    cause,
    suggestion: `Fix ${CONFIG_FILE}, or delete it and run \`blocks init\` again.`,
  });
}
