// The schemas the CLI can migrate, each rendered from its block's single source of DDL.
import { checkTableName, postgresSchemaStatements, retryTableName } from "../../registry/idempotency/stores/postgres-schema.js";
import { BlocksError } from "../utils/errors.js";

export type BlockSchema = {
  /** Templates (relative to templates/) for the plain and node-pg-migrate layouts. */
  template: string;
  nodePgMigrateTemplate: string;
  up(table: string): string[];
  down(table: string): string[];
  /** The tables whose presence means the migration already ran. */
  tables(table: string): string[];
};

export const SCHEMAS: Record<string, BlockSchema> = {
  idempotency: {
    template: "idempotency/migration.sql",
    nodePgMigrateTemplate: "idempotency/migration.node-pg-migrate.sql",
    up: (table) => postgresSchemaStatements(table),
    down: (table) => [`DROP TABLE IF EXISTS ${retryTableName(table)}`, `DROP TABLE IF EXISTS ${table}`],
    tables: (table) => [table, retryTableName(table)],
  },
};

/**
 * Validates a table name with the block's own rule, as a BlocksError the CLI can report.
 *
 * @example
 * validTable("billing.idempotency_records"); // returns it
 * validTable("Robert'); DROP TABLE"); // throws INVALID_TABLE_NAME
 */
export function validTable(table: string): string {
  try {
    return checkTableName(table);
  } catch (cause) {
    throw new BlocksError("INVALID_TABLE_NAME", `"${table}" is not a valid table name.`, {
      cause,
      suggestion: 'Use lower-case letters, digits and underscores, optionally schema-qualified: --table billing.idempotency_records',
    });
  }
}
