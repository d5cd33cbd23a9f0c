// One scenario's database: its own records and side-effect tables on the shared PostgreSQL, and worker configs for them.
import pg from "pg";
import type { WorkerConfig } from "../workers/worker-config";
import { requireDatabaseUrl } from "./services";
import {
  createEffectsTable,
  createRecordsTable,
  dropTables,
  executionsByKey,
  recordsByStatus,
  uniqueName,
} from "./tables";

export type ScenarioDb = Awaited<ReturnType<typeof openScenarioDb>>;

/** `mysqlUrl`: the records live in MySqlStore's tables there instead (the effects stay on PostgreSQL). */
export async function openScenarioDb(name: string, mysqlUrl?: string) {
  const url = requireDatabaseUrl();
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", () => {});
  const table = uniqueName(`${name}_rec`);
  const effectsTable = uniqueName(`${name}_fx`);
  const mysql = mysqlUrl ? await openMySqlRecords(mysqlUrl, table) : undefined;
  if (!mysql) await createRecordsTable(pool, table);
  await createEffectsTable(pool, effectsTable);
  return {
    pool,
    table,
    effectsTable,
    /** A worker on these tables, with the store reached at `storeUrl` (a proxy) or directly. */
    workerConfig(workerId: string, overrides: Partial<WorkerConfig> = {}): WorkerConfig {
      return {
        workerId,
        storeUrl: mysqlUrl ?? url,
        effectsUrl: url,
        table,
        effectsTable,
        logLevel: "info",
        ...overrides,
      };
    },
    executions: () => executionsByKey(pool, effectsTable),
    recordsByStatus: () => (mysql ? mysql.recordsByStatus() : recordsByStatus(pool, table)),
    async close() {
      await mysql?.close();
      await dropTables(pool, ...(mysql ? [] : [table]), effectsTable);
      await pool.end();
    },
  };
}

async function openMySqlRecords(url: string, table: string) {
  const { createPool } = await import("mysql2/promise");
  const { mySqlDropStatements, mySqlSchemaStatements } =
    await import("../../../registry/idempotency/stores/mysql-schema");
  const mysql = createPool({ uri: url, connectionLimit: 2 });
  for (const statement of mySqlSchemaStatements(table)) await mysql.query(statement);
  return {
    async recordsByStatus(): Promise<Record<string, number>> {
      const [rows] = await mysql.query(`SELECT status, COUNT(*) AS n FROM ${table} GROUP BY status`);
      return Object.fromEntries(
        (rows as Array<{ status: string; n: number }>).map((row) => [row.status, Number(row.n)]),
      );
    },
    async close() {
      for (const statement of mySqlDropStatements(table)) await mysql.query(statement);
      await mysql.end();
    },
  };
}
