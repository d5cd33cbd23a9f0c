// Checks this app's idempotency wiring on MySQL or MariaDB (MYSQL_URL): one run per key, in a transaction too, maintenance, a clean close.
import { expect, it } from "vitest";
import { mySqlSchemaStatements } from "../stores/mysql-schema";
import { IDEMPOTENCY_TABLE } from "./table";
import { checkWiring } from "./testing/check-wiring";
import * as database from "./database-mysql2";

it.skipIf(!process.env.MYSQL_URL)(
  "runs an operation once per key (in a transaction too), runs the maintenance jobs, and closes without closing the app's client (needs MYSQL_URL)",
  async () => {
    const db = database.connectDatabase();
    // The migration's statements, all safe to run again; the keys are new on every run.
    for (const statement of mySqlSchemaStatements(IDEMPOTENCY_TABLE)) await db.query(statement);
    await checkWiring(database, db, { transactions: true });
    await expect(db.query("SELECT 1")).rejects.toThrow();
  },
  30_000,
);
