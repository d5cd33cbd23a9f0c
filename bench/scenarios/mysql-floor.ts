// MySqlStore's first request against the hand-written floor on the same mysql2 pool: INSERT the record, then
// UPDATE it to SUCCESS. In process (the work is the database's), contenders in alternation, ratios round by
// round; and the store's round trips for a first request and a replay, counted on the pool.
import { createHash, randomUUID } from "node:crypto";
import { createPool, type Pool } from "mysql2/promise";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { mySqlDropStatements, mySqlSchemaStatements } from "@/blocks/idempotency/stores/mysql-schema";
import { MySqlStore, type MySqlClient } from "@/blocks/idempotency/stores/mysql-store";
import { assertLoopback, settings } from "../config";
import { runId } from "../support/services";
import { alternate, type TransactionalRow } from "./transactional";

export type MySqlFloorResult = {
  turnSeconds: number;
  lanes: number;
  rows: TransactionalRow[];
  roundTrips: { firstRequest: number; replay: number };
};

/** Counts the statements that reach the server; every one is a round trip. */
function counted(pool: Pool) {
  const counter = { statements: 0 };
  const client: MySqlClient = { query: (sql, values) => (counter.statements++, pool.query(sql, values)) };
  return { counter, client };
}

async function createTable(pool: Pool, purpose: string): Promise<string> {
  const table = `bench_${runId}_${purpose}`;
  for (const statement of mySqlSchemaStatements(table)) await pool.query(statement);
  return table;
}

export async function mysqlFloor(): Promise<MySqlFloorResult> {
  const pool = createPool({ uri: assertLoopback(settings.mysqlUrl), connectionLimit: settings.poolSize });
  const tables: string[] = [];
  try {
    const storeTable = await createTable(pool, "my_store");
    const floorTable = await createTable(pool, "my_floor");
    tables.push(storeTable, floorTable);
    const store = counted(pool);
    const handler = new IdempotencyHandler(new MySqlStore(store.client, { table: storeTable }));
    const floor = counted(pool);
    const context = (key: string) => ({ operation: "orders:create", userId: "u_bench", key, payload: { amount: 1 } });
    const result = (key: string) => ({ orderId: key });

    const trips = async (run: () => Promise<unknown>) => {
      const before = store.counter.statements;
      await run();
      return store.counter.statements - before;
    };
    const key = `${runId}-${randomUUID()}`;
    const roundTrips = {
      firstRequest: await trips(() => handler.execute(context(key), () => result(key))),
      replay: await trips(() => handler.execute(context(key), () => result(key))),
    };
    console.log(`  round trips: first request ${roundTrips.firstRequest}, replay ${roundTrips.replay}`);

    const rows = await alternate([
      {
        label: "floor: INSERT, then UPDATE (mysql2 Pool)",
        async request(key) {
          // What a hand-written version needs for the same guarantee: one unique key for the scope, the request's
          // hash (a reused key with another body is refused), a token so only this execution completes it.
          const scope = createHash("sha256").update(`orders:create${"u_bench"}${key}`).digest();
          const requestHash = createHash("sha256")
            .update(JSON.stringify({ amount: 1 }))
            .digest("hex");
          const token = randomUUID();
          await floor.client.query(
            `INSERT INTO ${floorTable} (scope_hash, operation, user_id, \`key\`, request_hash, status, token, expires_at, created_at, updated_at)
             VALUES (?, 'orders:create', 'u_bench', ?, ?, 'PROCESSING', ?, UTC_TIMESTAMP(6) + INTERVAL 1 DAY, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
            [scope, key, requestHash, token],
          );
          await floor.client.query(
            `UPDATE ${floorTable} SET status = 'SUCCESS', response = ?, updated_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 DAY
             WHERE scope_hash = ? AND token = ? AND status = 'PROCESSING'`,
            [JSON.stringify(result(key)), scope, token],
          );
        },
        commits: () => floor.counter.statements,
      },
      {
        label: "MySqlStore first request (mysql2 Pool)",
        request: (key) => handler.execute(context(key), () => result(key)),
        commits: () => store.counter.statements,
      },
    ]);
    return { turnSeconds: settings.transactionalSeconds, lanes: settings.connections, rows, roundTrips };
  } finally {
    for (const table of tables) for (const statement of mySqlDropStatements(table)) await pool.query(statement);
    await pool.end();
  }
}
