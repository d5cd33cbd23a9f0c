// Each client's own ways of sending SQL on the guarded transaction: templates with inlined fragments, nested
// transactions and savepoints, derived transaction objects. Every one that would end the transaction is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { clientKinds, type ClientName, type OpenedClient } from "../support/client-harness";
import { dropTables, SERVICE_START_TIMEOUT_MS, uniqueTableName } from "../support/services";

/* eslint-disable @typescript-eslint/no-explicit-any -- each client's own transaction object, driven in its own idiom. */
type Attempt = [string, (tx: any) => unknown];

/** Per client: calls that must be refused with TRANSACTION_CONTROL_REFUSED. */
async function attemptsFor(client: ClientName): Promise<Attempt[]> {
  switch (client) {
    case "pglite": {
      const { raw, sql } = await import("@electric-sql/pglite/template");
      return [
        ["sql template", (tx) => tx.sql`COMMIT`],
        ["sql with a raw part", (tx) => tx.sql`select 1; ${raw`COMMIT`}`],
        ["sql with a nested fragment", (tx) => tx.sql`${sql`ROLLBACK`}`],
      ];
    }
    case "drizzle-pg":
    case "drizzle-postgres-js":
    case "drizzle-pglite": {
      const { sql } = await import("drizzle-orm");
      return [
        ["execute(sql``)", (tx) => tx.execute(sql`commit`)],
        ["execute(sql.raw) with two statements", (tx) => tx.execute(sql.raw("select 1; commit"))],
        ["a nested transaction's execute", (tx) => tx.transaction((nested: any) => nested.execute(sql`rollback`))],
        ["its session", (tx) => tx.session.client.release()],
      ];
    }
    case "postgres-js":
      return [
        ["tagged template", (tx) => tx`commit`],
        ["a fragment inlined in a template", (tx) => tx`select 1; ${tx`commit`}`],
        ["a savepoint's sql", (tx) => tx.savepoint((sp: any) => sp.unsafe("rollback"))],
        ["begin (a savepoint)'s sql", (tx) => tx.begin((sp: any) => sp`end`)],
      ];
    case "prisma":
    case "prisma-pool":
      return [
        ["$executeRaw template", (tx) => tx.$executeRaw`COMMIT`],
        ["$queryRawUnsafe", (tx) => tx.$queryRawUnsafe("select 1; commit")],
        ["$queryRaw template", (tx) => tx.$queryRaw`ROLLBACK`],
      ];
    case "kysely": {
      const { sql } = await import("kysely");
      return [
        ["sql``.execute(trx)", (trx) => sql`commit`.execute(trx)],
        ["executeQuery", (trx) => trx.executeQuery(sql`rollback`.compile(trx))],
        ["under withSchema", (trx) => sql`commit`.execute(trx.withSchema("public"))],
      ];
    }
    case "typeorm":
      return [
        ["sql template", (manager) => manager.sql`COMMIT`],
        ["sql with a function's raw SQL", (manager) => manager.sql`select 1; ${() => "commit"}`],
        ["a nested transaction's query", (manager) => manager.transaction((nested: any) => nested.query("ROLLBACK"))],
        ["queryRunner.query", (manager) => manager.queryRunner.query("COMMIT")],
      ];
    case "knex":
      return [
        ["raw", (trx) => trx.raw("COMMIT")],
        ["a raw binding inlined as SQL", (trx) => trx.raw("select 1; ?", [{ sql: "commit" }])],
        ["a nested transaction's raw", (trx) => trx.transaction((nested: any) => nested.raw("rollback"))],
        ["a savepoint's commit", (trx) => trx.savepoint((sp: any) => sp.commit())],
      ];
    default:
      return [];
  }
}
/* eslint-enable @typescript-eslint/no-explicit-any */

for (const kind of clientKinds) {
  describe(`transaction guard idioms: ${kind.name}`, { timeout: 60_000 }, () => {
    let opened: OpenedClient<unknown>;
    let table: string;
    let attempts: Attempt[];

    beforeAll(async () => {
      opened = await kind.open();
      attempts = await attemptsFor(kind.client);
      table = uniqueTableName("idiom");
      await new PostgresStore(opened.client, { table }).createSchema();
    }, SERVICE_START_TIMEOUT_MS);
    afterAll(async () => {
      if (opened) await dropTables(opened.client, table);
      await opened?.close();
    });

    it("refuses the client's own ways of ending the transaction; the transaction still commits its record", async () => {
      const handler = new IdempotencyHandler(new PostgresStore(opened.client, { table }), undefined, {
        storeTimeoutMs: 10_000,
      });
      const tried: string[] = [];
      const scope = { operation: "orders:create", userId: "u_1", key: `idiom-${kind.client}`, payload: {} };
      await handler.executeInTransaction(scope, async ({ tx }) => {
        for (const [name, attempt] of attempts) {
          await expect(
            Promise.resolve().then(() => attempt(tx)),
            name,
          ).rejects.toMatchObject({ code: "TRANSACTION_CONTROL_REFUSED" });
          tried.push(name);
        }
        return { ok: true };
      });
      expect(tried).toHaveLength(attempts.length);
      const { rows } = await opened.client.query(`SELECT status FROM ${table} WHERE key = $1`, [scope.key]);
      expect(rows).toEqual([{ status: "SUCCESS" }]);
    });
  });
}
