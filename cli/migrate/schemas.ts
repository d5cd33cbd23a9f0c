// Each block's schema as data (see migration-sql.ts): the CLI knows no block by name, and plans a migration without running code.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Registry } from "../registry/types.js";
import { BlocksError } from "../utils/errors.js";
import { packageRoot } from "../utils/package-root.js";
import { checkTable, migrationSqlOf, renderSql, type MigrationSql, type SchemaModule } from "./migration-sql.js";

export type BlockSchema = {
  sql: MigrationSql;
  /** Absolute template files for the plain and node-pg-migrate layouts. */
  template: string;
  nodePgMigrateTemplate: string;
  /** What the tables hold, for the migration's first line. */
  title: string;
};

const loaded = new Map<string, BlockSchema>();

/**
 * Reads the schema of every block that declares one, so planning a migration stays synchronous.
 * A block's `migration.sql` is taken as it is; a `migration.schema` module (the shipped blocks, a
 * `--registry` folder the user named) is imported and rendered into that data. Items reach this with
 * data only (validate-item.ts refuses a schema module in an item).
 *
 * @example
 * await loadSchemas(registry); // then schemaOf("idempotency")
 */
export async function loadSchemas(registry: Registry): Promise<void> {
  for (const block of registry.blocks) {
    const migration = block.migration;
    if (!migration?.sql && !migration?.schema) continue;
    const fromRegistry = (file: string | undefined, fallback: string) => path.resolve(registry.root, file ?? fallback);
    const sql =
      migration.sql ??
      migrationSqlOf(
        await importSchema(path.resolve(registry.root, migration.schema as string), registry.root),
        migration.table,
        block.name,
      );
    loaded.set(block.name, {
      sql,
      template: fromRegistry(migration.template, "../templates/migration.sql"),
      nodePgMigrateTemplate: fromRegistry(
        migration.nodePgMigrateTemplate,
        "../templates/migration.node-pg-migrate.sql",
      ),
      title: migration.title ?? `the ${block.name} block's tables`,
    });
  }
}

/**
 * The loaded schema of a block (after `loadRegistry`).
 *
 * @example
 * schemaStatements(schemaOf("idempotency"), "billing.idempotency_records");
 */
export function schemaOf(block: string): BlockSchema {
  const schema = loaded.get(block);
  if (!schema) {
    throw new BlocksError(
      "INVALID_REGISTRY",
      `Block "${block}" has a migration but neither its SQL nor a schema module.`,
      {
        suggestion: `Add "migration": { "schema": "${block}/<name>-schema.ts", ... } to registry/${block}/block.json.`,
      },
    );
  }
  return schema;
}

/**
 * The statements that create the block's objects for `table`.
 *
 * @example
 * schemaStatements(schemaOf("rate-limiter"), "rate_limits")[0]; // "CREATE UNLOGGED TABLE IF NOT EXISTS rate_limits (..."
 */
export function schemaStatements(schema: BlockSchema, table: string): string[] {
  return renderSql(schema.sql.statements, checkTable(schema.sql, table));
}

/**
 * The statements that remove them, for a migration's down step.
 *
 * @example
 * dropStatements(schemaOf("rate-limiter"), "rate_limits"); // ["DROP TABLE IF EXISTS rate_limits"]
 */
export function dropStatements(schema: BlockSchema, table: string): string[] {
  return renderSql(schema.sql.drop, checkTable(schema.sql, table));
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
  const { sql } = schemaOf(block);
  const checked = checkTable(sql, table);
  return [renderSql(sql.tables, checked), renderSql(sql.functions ?? [], checked)];
}

/**
 * Validates a table name with the block's own rule, as a BlocksError the CLI can report.
 *
 * @example
 * validTable("idempotency", "billing.idempotency_records"); // returns it
 * validTable("idempotency", "Robert'); DROP TABLE"); // throws INVALID_TABLE_NAME
 */
export function validTable(block: string, table: string): string {
  return checkTable(schemaOf(block).sql, table);
}

/**
 * From dist, the shipped registry's schema modules are compiled beside the CLI (tsconfig.build.json);
 * from source (tsx, vitest) the .ts imports directly; any other registry folder is transpiled once
 * with the TypeScript compiler ts-morph carries. Schema modules import nothing, so each stands alone.
 */
async function importSchema(file: string, registryRoot: string): Promise<SchemaModule> {
  const module = (await importRegistryModule(file, registryRoot)) as Partial<SchemaModule>;
  for (const name of ["schemaStatements", "dropStatements", "schemaTables", "checkTableName"] as const) {
    if (typeof module[name] !== "function")
      throw new BlocksError("INVALID_REGISTRY", `The schema module ${file} does not export ${name}().`);
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
  return importModuleText(await readFile(file, "utf8"));
}

/**
 * Imports TypeScript that stands alone from its text: a schema module as a project's copy or base holds it.
 *
 * @example
 * const { schemaStatements } = await importModuleText(await readBase(root, hash));
 */
export async function importModuleText(text: string): Promise<Record<string, unknown>> {
  const { ts } = await import("ts-morph");
  const output = ts.transpileModule(text, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  const dir = await mkdtemp(path.join(tmpdir(), "blocks-schema-"));
  try {
    const target = path.join(dir, "schema.mjs");
    await writeFile(target, output.outputText);
    return (await import(pathToFileURL(target).href)) as Record<string, unknown>;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
