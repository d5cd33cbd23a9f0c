// Checks this app's idempotency wiring on PostgreSQL (DATABASE_URL): one run per key, in a transaction too, maintenance, a clean close.
import { expect, it } from "vitest";
import { postgresSchemaStatements } from "../stores/postgres-schema";
import { IDEMPOTENCY_TABLE } from "./table";
import { checkWiring } from "./testing/check-wiring";
import * as database from "./database-prisma";

it.skipIf(!process.env.DATABASE_URL)(
  "runs an operation once per key (in a transaction too), runs the maintenance jobs, and closes without closing the app's client (needs DATABASE_URL)",
  async () => {
    const db = database.connectDatabase();
    const { sql } = database.bindDatabase(db);
    // The migration's statements, all safe to run again; the keys are new on every run.
    for (const statement of postgresSchemaStatements(IDEMPOTENCY_TABLE)) await sql.query(statement);
    await checkWiring(database, db, { transactions: true });
    await expect(sql.query("SELECT 1")).rejects.toThrow();
  },
  30_000,
);
