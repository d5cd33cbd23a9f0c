// A block's schema as data: rendered from its module once, it writes exactly what the module writes, for any table.
import { describe, expect, it } from "vitest";
import { checkTable, migrationSqlOf, renderSql, type SchemaModule } from "../../cli/migrate/migration-sql.js";
import * as idempotency from "../../registry/idempotency/stores/postgres-schema.js";
import * as outbox from "../../registry/outbox/postgres-schema.js";
import * as rateLimiter from "../../registry/rate-limiter/stores/postgres-schema.js";

describe("migrationSqlOf", () => {
  it.each([
    ["idempotency", idempotency as SchemaModule, "idempotency_records"],
    ["rate-limiter", rateLimiter as SchemaModule, "rate_limits"],
    ["outbox", outbox as SchemaModule, "outbox_messages"],
  ])("the %s block's data renders what its module renders, and keeps its table-name limit", (block, module, table) => {
    const sql = migrationSqlOf(module, table, block);
    for (const name of [table, "billing.orders_x", "a", `s.${"b".repeat(sql.maxNameLength)}`]) {
      expect(renderSql(sql.statements, checkTable(sql, name))).toEqual(module.schemaStatements(name));
      expect(renderSql(sql.drop, name)).toEqual(module.dropStatements(name));
      expect(renderSql(sql.tables, name)).toEqual(module.schemaTables(name));
    }
    expect(() => module.checkTableName("c".repeat(sql.maxNameLength + 1))).toThrow();
    expect(() => checkTable(sql, "c".repeat(sql.maxNameLength + 1))).toThrow(/not a valid table name/);
  });

  it("refuses a module whose SQL is not the table name put in place (it could not be written as data)", () => {
    const upper: SchemaModule = {
      ...rateLimiter,
      schemaStatements: (table = "rate_limits") => [`CREATE TABLE IF NOT EXISTS ${table.toUpperCase()} (id int)`],
    };
    expect(() => migrationSqlOf(upper, "rate_limits", "shouting")).toThrow(/cannot be written as data/);
  });

  it("the CLI's own rule keeps anything but an identifier out of the SQL", () => {
    for (const bad of ["x; DROP TABLE users", "X", "a.b.c", "x--", "", "1x"])
      expect(() => checkTable({ maxNameLength: 40 }, bad), bad).toThrow();
  });
});
