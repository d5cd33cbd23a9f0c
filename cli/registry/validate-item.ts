// Everything the CLI takes from a registry item, checked as data before anything is written, installed or planned.
//
// An item is untrusted input (a file or URL someone handed the user): its files are only text to copy,
// each landing inside its own block; its packages are registry names with versions; its migration is
// SQL text with placeholders (migrate/migration-sql.ts), never a module to run; its templates are its own files.
import path from "node:path";
import { checkTable, migrationSqlProblem, type MigrationSql } from "../migrate/migration-sql.js";
import { parsePackageSpecifier } from "../project/package-specifier.js";
import { BlocksError } from "../utils/errors.js";

export type ValidItem = {
  name: string;
  description: string | undefined;
  /** `name -> range`, every one a registry package name with a version range or tag. */
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  registryDependencies: string[];
  /** Each file's path inside its block (`adapters/hono.ts`), never absolute, never with `..`, each once. */
  files: Array<{ path: string; content: string }>;
  /** Templates are registry paths (`<name>/<one of files>`), so they resolve inside the item. */
  migration?: { table: string; sql: MigrationSql; title?: string; template?: string; nodePgMigrateTemplate?: string };
};

type RawFile = { content?: unknown; target?: unknown };
type RawMigration = {
  table?: unknown;
  schema?: unknown;
  sql?: unknown;
  title?: unknown;
  template?: unknown;
  nodePgMigrateTemplate?: unknown;
};
type RawItem = {
  name?: unknown;
  type?: unknown;
  description?: unknown;
  dependencies?: unknown;
  devDependencies?: unknown;
  registryDependencies?: unknown;
  files?: unknown;
  meta?: { blocks?: { dir?: unknown; migration?: RawMigration } };
};

/** A control character (a newline, an ANSI escape): text printed to the terminal or into a SQL comment stays one plain line. */
const hasControl = (text: string) => [...text].some((char) => char.charCodeAt(0) < 32 || char.charCodeAt(0) === 127);

/**
 * Checks a parsed registry item (as `blocks registry build` writes it, or any shadcn `registry:item`)
 * and returns what `blocks add` may use, or throws INVALID_REGISTRY naming `source` and the problem.
 *
 * @example
 * const item = validateItem(JSON.parse(text), "https://example.com/r/idempotency.json");
 * item.files[0]; // { path: "README.md", content: "..." }
 */
export function validateItem(raw: unknown, source: string): ValidItem {
  const item = (typeof raw === "object" && raw !== null ? raw : {}) as RawItem;
  const fail = (why: string, suggestion?: string) => invalid(source, why, suggestion);
  if (
    item.type !== "registry:item" ||
    typeof item.name !== "string" ||
    !/^[a-z0-9][a-z0-9-]{0,63}$/.test(item.name) ||
    !Array.isArray(item.files)
  ) {
    throw fail('is not a registry item: it needs "type": "registry:item", a lower-case "name" and "files"');
  }
  const name = item.name;
  if (item.description !== undefined && (typeof item.description !== "string" || hasControl(item.description)))
    throw fail("has a description that is not one line of text");
  const dir = item.meta?.blocks?.dir;
  const files = (item.files as RawFile[]).map((file) => {
    if (typeof file?.content !== "string" || typeof file.target !== "string")
      throw fail("has a file without content or target");
    const inBlock = blockPath(name, file.target, typeof dir === "string" ? dir : undefined);
    if (inBlock === undefined)
      throw fail(`has the target ${JSON.stringify(file.target)}, which leads outside the project`);
    return { path: inBlock, content: file.content };
  });
  const seen = new Set<string>();
  for (const file of files) {
    if (seen.has(file.path)) throw fail(`has two files that land at ${name}/${file.path}`);
    seen.add(file.path);
  }
  const registryDependencies = list(item.registryDependencies, "registryDependencies", fail).filter(
    (dependency) => dependency !== name,
  );
  const migration =
    item.meta?.blocks?.migration === undefined
      ? undefined
      : checkMigration(name, item.meta.blocks.migration, seen, fail);
  return {
    name,
    description: item.description,
    dependencies: packages(list(item.dependencies, "dependencies", fail), "dependencies", fail),
    devDependencies: packages(list(item.devDependencies, "devDependencies", fail), "devDependencies", fail),
    registryDependencies,
    files,
    ...(migration ? { migration } : {}),
  };
}

type Fail = (why: string, suggestion?: string) => BlocksError;

/**
 * "~/src/blocks/idempotency/http/index.ts" -> "http/index.ts": the path inside the block, wherever the
 * item aimed it; undefined when the target or that path could lead anywhere else. A leading "~/" is
 * shadcn's project root; any other "~", an absolute path, a drive letter, "\", ".." or an empty part is refused.
 */
function blockPath(name: string, target: string, dir: string | undefined): string | undefined {
  const bare = target.replace(/^~\//, "");
  if (!isPlainRelative(bare)) return undefined;
  const prefix = dir ? `${dir}/${name}/` : undefined;
  const at = bare.indexOf(`${name}/`);
  const inBlock =
    prefix && bare.startsWith(prefix)
      ? bare.slice(prefix.length)
      : at === 0 || bare[at - 1] === "/"
        ? bare.slice(at + name.length + 1)
        : path.posix.basename(bare);
  return isPlainRelative(inBlock) ? inBlock : undefined;
}

function isPlainRelative(file: string): boolean {
  if (file === "" || file.startsWith("/") || /^[A-Za-z]:/.test(file) || /[\\~]/.test(file) || hasControl(file))
    return false;
  return file.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..");
}

function list(value: unknown, field: string, fail: Fail): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === "string"))
    throw fail(`has "${field}" that is not a list of strings`);
  return value as string[];
}

/** shadcn's "name@range" strings back to a map; anything a package manager would read as more than a name and a version is refused. */
function packages(specifiers: string[], field: string, fail: Fail): Record<string, string> {
  const entries = specifiers.map((specifier) => {
    const parsed = parsePackageSpecifier(specifier);
    if (typeof parsed === "string") {
      throw fail(
        `lists ${JSON.stringify(specifier)} in "${field}", which ${parsed}`,
        "An item may only name registry packages with a version range or tag; install anything else yourself.",
      );
    }
    return [parsed.name, parsed.range] as const;
  });
  return Object.fromEntries(entries);
}

function checkMigration(
  name: string,
  raw: RawMigration,
  files: Set<string>,
  fail: Fail,
): NonNullable<ValidItem["migration"]> {
  if (typeof raw !== "object" || raw === null) throw fail('has a "migration" that is not an object');
  const templates: { template?: string; nodePgMigrateTemplate?: string } = {};
  for (const field of ["template", "nodePgMigrateTemplate"] as const) {
    const value = raw[field];
    if (value === undefined) continue;
    // The template must be one of the item's own files: a path elsewhere would copy any local file (~/.npmrc) into migrations/.
    const inBlock =
      typeof value === "string" && value.startsWith(`${name}/`) ? value.slice(name.length + 1) : undefined;
    if (inBlock === undefined || !isPlainRelative(inBlock) || !files.has(inBlock)) {
      throw fail(
        `has the migration ${field} ${JSON.stringify(value)}, which is not one of the item's own files`,
        `Name a file of the item as "${name}/<its path in the block>", or leave the ${field} out for the CLI's own.`,
      );
    }
    templates[field] = `${name}/${inBlock}`;
  }
  if (raw.schema !== undefined) {
    throw fail(
      `names the schema module ${JSON.stringify(raw.schema)} for its migration: an item's migration is data ("meta.blocks.migration.sql"), never code the CLI would run`,
      "Rebuild the item with `blocks registry build`, which writes the migration as SQL.",
    );
  }
  const problem = migrationSqlProblem(raw.sql);
  if (problem)
    throw fail(`has a migration without its SQL as data: ${problem}`, "Rebuild the item with `blocks registry build`.");
  const sql = raw.sql as MigrationSql;
  const table = raw.table;
  if (typeof table !== "string") throw fail('has a migration without a default "table"');
  try {
    checkTable(sql, table);
  } catch {
    throw fail(
      `has the migration table ${JSON.stringify(table)}, which is not a lower-case table name of at most ${sql.maxNameLength} characters`,
    );
  }
  if (raw.title !== undefined && (typeof raw.title !== "string" || hasControl(raw.title)))
    throw fail("has a migration title that is not one line of text");
  return { table, sql, ...(raw.title === undefined ? {} : { title: raw.title }), ...templates };
}

function invalid(source: string, why: string, suggestion?: string): BlocksError {
  return new BlocksError("INVALID_REGISTRY", `The registry item ${source} ${why}.`, {
    suggestion:
      suggestion ?? "Give `blocks add` an item written by `blocks registry build` (a .json file or an http(s) URL).",
  });
}
