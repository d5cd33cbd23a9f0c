// A block's schema as data: SQL text with the table's name left as a placeholder, so planning a migration runs no code.
//
// `{{table}}` is the table as the user names it (optionally schema-qualified, `billing.orders_idempotency`);
// `{{name}}` is its last part (`orders_idempotency`), for the names of constraints and indexes.
// Registry items carry it in `meta.blocks.migration.sql`; a registry folder's block.json may declare it
// too, or name a schema module that the CLI renders into it (the shipped blocks do).
import { BlocksError } from "../utils/errors.js";

export type MigrationSql = {
  /** The longest bare table name the block accepts (its constraint and index names must fit PostgreSQL's 63). */
  maxNameLength: number;
  /** The statements that create the block's objects; each is safe to run again. */
  statements: string[];
  /** The statements that remove them (a migration's down step), dependants first. */
  drop: string[];
  /** The tables whose presence means the migration ran. */
  tables: string[];
  /** Functions the block's code calls, which a migration written before they existed lacks. */
  functions?: string[];
};

/** What a schema module exports (registry/<block>/stores/postgres-schema.ts), the source `migrationSqlOf` renders. */
export type SchemaModule = {
  schemaStatements(table?: string): string[];
  dropStatements(table: string): string[];
  schemaTables(table: string): string[];
  schemaFunctions?(table: string): string[];
  checkTableName(table: string): string;
};

const PLACEHOLDER = /\{\{(table|name)\}\}/g;
const MAX_IDENTIFIER = 63;

/**
 * Fills the placeholders with a table name the CLI's own rule accepts (so nothing but an identifier lands in SQL).
 *
 * @example
 * renderSql(["CREATE INDEX IF NOT EXISTS {{name}}_idx ON {{table}} (x)"], "billing.orders"); // ["CREATE INDEX IF NOT EXISTS orders_idx ON billing.orders (x)"]
 */
export function renderSql(texts: string[], table: string): string[] {
  const name = table.split(".").pop() as string;
  return texts.map((text) => text.replace(PLACEHOLDER, (_, which: string) => (which === "table" ? table : name)));
}

/**
 * Throws unless `table` is a lower-case identifier of at most `maxNameLength`, optionally schema-qualified.
 *
 * @example
 * checkTable(sql, "billing.idempotency_records"); // returns it
 * checkTable(sql, "Robert'); DROP TABLE x; --"); // throws INVALID_TABLE_NAME
 */
export function checkTable(sql: Pick<MigrationSql, "maxNameLength">, table: string): string {
  const pattern = new RegExp(
    `^(?:[a-z_][a-z0-9_]{0,${MAX_IDENTIFIER - 1}}\\.)?[a-z_][a-z0-9_]{0,${sql.maxNameLength - 1}}$`,
  );
  if (pattern.test(table)) return table;
  throw new BlocksError("INVALID_TABLE_NAME", `"${table}" is not a valid table name.`, {
    suggestion: `Use lower-case letters, digits and underscores (at most ${sql.maxNameLength}), optionally schema-qualified: --table billing.idempotency_records`,
  });
}

/**
 * Checks data from a registry item or a block.json, and returns why it is not a `MigrationSql` (or undefined).
 *
 * @example
 * migrationSqlProblem({ maxNameLength: 40, statements: ["CREATE TABLE {{table}} (id int)"], drop: [], tables: ["{{table}}"] }); // undefined
 */
export function migrationSqlProblem(value: unknown): string | undefined {
  const sql = value as Partial<Record<keyof MigrationSql, unknown>> | null;
  if (typeof sql !== "object" || sql === null) return '"sql" is not an object';
  const { maxNameLength } = sql;
  if (
    typeof maxNameLength !== "number" ||
    !Number.isInteger(maxNameLength) ||
    maxNameLength < 1 ||
    maxNameLength > MAX_IDENTIFIER
  ) {
    return `"sql.maxNameLength" must be an integer from 1 to ${MAX_IDENTIFIER}`;
  }
  for (const field of ["statements", "drop", "tables", "functions"] as const) {
    const list = sql[field];
    if (list === undefined && field === "functions") continue;
    if (!Array.isArray(list) || !list.every((entry) => typeof entry === "string" && entry.length > 0))
      return `"sql.${field}" must be a list of non-empty strings`;
  }
  if ((sql.statements as string[]).length === 0) return '"sql.statements" is empty';
  return undefined;
}

/**
 * The data a schema module stands for, rendered once with a marker table name and checked against the
 * module's own output for the default table and a schema-qualified one. Only for code the user chose
 * to run (the shipped registry, a `--registry` folder, `blocks registry build`); never for an item.
 *
 * @example
 * migrationSqlOf(await import("registry/idempotency/stores/postgres-schema.ts"), "idempotency_records", "idempotency");
 */
export function migrationSqlOf(module: SchemaModule, defaultTable: string, block: string): MigrationSql {
  const markerSchema = "zz_blocks_schema_marker";
  const markerName = "zz_blocks_name_marker";
  const marker = `${markerSchema}.${markerName}`;
  const template = (texts: string[]) =>
    texts.map((text) => text.split(marker).join("{{table}}").split(markerName).join("{{name}}"));
  const functions = module.schemaFunctions?.(marker);
  const sql: MigrationSql = {
    maxNameLength: longestAccepted(module),
    statements: template(module.schemaStatements(marker)),
    drop: template(module.dropStatements(marker)),
    tables: template(module.schemaTables(marker)),
    ...(functions ? { functions: template(functions) } : {}),
  };
  for (const table of [defaultTable, `public.${defaultTable}`]) {
    const same = (texts: string[], expected: string[] | undefined) =>
      JSON.stringify(renderSql(texts, table)) === JSON.stringify(expected ?? []);
    const faithful =
      same(sql.statements, module.schemaStatements(table)) &&
      same(sql.drop, module.dropStatements(table)) &&
      same(sql.tables, module.schemaTables(table)) &&
      same(sql.functions ?? [], module.schemaFunctions?.(table));
    if (!faithful || JSON.stringify(sql).includes(markerSchema)) {
      throw new BlocksError(
        "INVALID_REGISTRY",
        `Block "${block}": its schema module's SQL cannot be written as data with {{table}} and {{name}} in place of the table.`,
        {
          suggestion:
            'Build every name from the table argument as `${table}` or as its last part (`table.split(".").pop()`), and nothing else from it.',
        },
      );
    }
  }
  return sql;
}

/** The module's own limit on the bare name, which the CLI's rule then applies without running it. */
function longestAccepted(module: SchemaModule): number {
  let longest = 0;
  for (let length = 1; length <= MAX_IDENTIFIER; length++) {
    try {
      module.checkTableName("a".repeat(length));
      longest = length;
    } catch {
      break;
    }
  }
  if (longest === 0)
    throw new BlocksError("INVALID_REGISTRY", "A schema module's checkTableName() accepts no table name at all.");
  return longest;
}
