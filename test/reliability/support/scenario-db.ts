// One scenario's database: its own records and side-effect tables on the shared PostgreSQL, and worker configs for them.
import pg from "pg";
import type { WorkerConfig } from "../workers/worker-config";
import { requireDatabaseUrl } from "./services";
import { createEffectsTable, createRecordsTable, dropTables, executionsByKey, uniqueName } from "./tables";

export type ScenarioDb = Awaited<ReturnType<typeof openScenarioDb>>;

export async function openScenarioDb(name: string) {
  const url = requireDatabaseUrl();
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", () => {});
  const table = uniqueName(`${name}_rec`);
  const effectsTable = uniqueName(`${name}_fx`);
  await createRecordsTable(pool, table);
  await createEffectsTable(pool, effectsTable);
  return {
    pool,
    table,
    effectsTable,
    /** A worker on these tables, with the store reached at `storeUrl` (a proxy) or directly. */
    workerConfig(workerId: string, overrides: Partial<WorkerConfig> = {}): WorkerConfig {
      return { workerId, storeUrl: url, effectsUrl: url, table, effectsTable, logLevel: "info", ...overrides };
    },
    executions: () => executionsByKey(pool, effectsTable),
    async close() {
      await dropTables(pool, table, effectsTable);
      await pool.end();
    },
  };
}
