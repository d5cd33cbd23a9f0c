// Each block's schema, loaded from the module its block.json names: the CLI knows no block by name.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Registry } from "../registry/manifest.js";
import { BlocksError } from "../utils/errors.js";
import { packageRoot } from "../utils/package-root.js";

/** What a block's schema module exports (e.g. registry/idempotency/stores/postgres-schema.ts). */
export type SchemaModule = {
  schemaStatements(table?: string): string[];
  dropStatements(table: string): string[];
  schemaTables(table: string): string[];
  /** Functions the block's code calls, if any (a migration written before one existed lacks it). */
  schemaFunctions?(table: string): string[];
  checkTableName(table: string): string;
};

export type BlockSchema = {
  module: SchemaModule;
  /** Absolute template files for the plain and node-pg-migrate layouts. */
  template: string;
  nodePgMigrateTemplate: string;
  /** What the tables hold, for the migration's first line. */
  title: string;
};

const loaded = new Map<string, BlockSchema>();

/**
 * Loads the schema module of every block that declares one, so planning a migration stays synchronous.
 *
 * @example
 * await loadSchemas(registry); // then schemaOf("idempotency")
 */
export async function loadSchemas(registry: Registry): Promise<void> {
  for (const block of registry.blocks) {
    const migration = block.migration;
    if (!migration?.schema) continue;
    const fromRegistry = (file: string | undefined, fallback: string) => path.resolve(registry.root, file ?? fallback);
    loaded.set(block.name, {
      module: await importSchema(path.resolve(registry.root, migration.schema), registry.root),
      template: fromRegistry(migration.template, "../templates/migration.sql"),
      nodePgMigrateTemplate: fromRegistry(migration.nodePgMigrateTemplate, "../templates/migration.node-pg-migrate.sql"),
      title: migration.title ?? `the ${block.name} block's tables`,
    });
  }
}

/**
 * The loaded schema of a block (after `loadRegistry`).
 *
 * @example
 * schemaOf("idempotency").module.schemaStatements("billing.idempotency_records");
 */
export function schemaOf(block: string): BlockSchema {
  const schema = loaded.get(block);
  if (!schema) {
    throw new BlocksError("INVALID_REGISTRY", `Block "${block}" has a migration but names no schema module.`, {
      suggestion: `Add "migration": { "schema": "${block}/<name>-schema.ts", ... } to registry/${block}/block.json.`,
    });
  }
  return schema;
}

/**
 * The SQL that names the block's objects missing on a database: $1 the tables, $2 the functions
 * (shown with `()`). Used by `migrate --apply` and `doctor`.
 */
export const MISSING_OBJECTS_SQL = `SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(name) IS NULL
  UNION ALL SELECT name || '()' FROM unnest($2::text[]) AS name WHERE to_regproc(name) IS NULL`;

/**
 * The parameters of MISSING_OBJECTS_SQL for a block's table.
 *
 * @example
 * await client.query(MISSING_OBJECTS_SQL, schemaObjects("idempotency", "idempotency_records"));
 */
export function schemaObjects(block: string, table: string): [string[], string[]] {
  const { module } = schemaOf(block);
  return [module.schemaTables(table), module.schemaFunctions?.(table) ?? []];
}

/**
 * Validates a table name with the block's own rule, as a BlocksError the CLI can report.
 *
 * @example
 * validTable("idempotency", "billing.idempotency_records"); // returns it
 * validTable("idempotency", "Robert'); DROP TABLE"); // throws INVALID_TABLE_NAME
 */
export function validTable(block: string, table: string): string {
  try {
    return schemaOf(block).module.checkTableName(table);
  } catch (cause) {
    if ((cause as { code?: unknown }).code === "INVALID_REGISTRY") throw cause;
    throw new BlocksError("INVALID_TABLE_NAME", `"${table}" is not a valid table name.`, {
      cause,
      suggestion: "Use lower-case letters, digits and underscores, optionally schema-qualified: --table billing.idempotency_records",
    });
  }
}

/**
 * From dist, the shipped registry's schema modules are compiled beside the CLI (tsconfig.build.json);
 * from source (tsx, vitest) the .ts imports directly; any other registry folder is transpiled once
 * with the TypeScript compiler ts-morph carries. Schema modules import nothing, so each stands alone.
 */
async function importSchema(file: string, registryRoot: string): Promise<SchemaModule> {
  const module = (await importRegistryModule(file, registryRoot)) as Partial<SchemaModule>;
  for (const name of ["schemaStatements", "dropStatements", "schemaTables", "checkTableName"] as const) {
    if (typeof module[name] !== "function") throw new BlocksError("INVALID_REGISTRY", `The schema module ${file} does not export ${name}().`);
  }
  return module as SchemaModule;
}

/**
 * Imports a registry module that stands alone (a schema, a DynamoDB table definition), wherever the CLI runs from.
 *
 * @example
 * const { dynamoDbTableDefinition } = await importRegistryModule("/registry/idempotency/stores/dynamodb-table.ts", "/registry");
 */
export async function importRegistryModule(file: string, registryRoot: string): Promise<Record<string, unknown>> {
  if (!existsSync(file)) throw new BlocksError("INVALID_REGISTRY", `The registry module ${file} does not exist.`);
  const here = fileURLToPath(import.meta.url);
  const compiled = path.join(packageRoot(), "dist", path.relative(packageRoot(), file)).replace(/\.ts$/, ".js");
  const shipped = path.resolve(registryRoot) === path.join(packageRoot(), "registry");
  if (here.endsWith(".ts")) return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  if (shipped && existsSync(compiled)) return (await import(pathToFileURL(compiled).href)) as Record<string, unknown>;
  return transpileAndImport(file);
}

async function transpileAndImport(file: string): Promise<Record<string, unknown>> {
  const { ts } = await import("ts-morph");
  const output = ts.transpileModule(await readFile(file, "utf8"), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  const dir = await mkdtemp(path.join(tmpdir(), "blocks-schema-"));
  try {
    const target = path.join(dir, "schema.mjs");
    await writeFile(target, output.outputText);
    return (await import(pathToFileURL(target).href)) as Record<string, unknown>;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
