// Checks this app's idempotency wiring on SQLite (libSQL) in a temporary file: one run per key, in a transaction too, maintenance, a clean close.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { sqliteSchemaStatements } from "../stores/sqlite-schema";
import { IDEMPOTENCY_TABLE } from "./table";
import { checkWiring } from "./testing/check-wiring";
import * as database from "./database-libsql";

it("runs an operation once per key (in a transaction too), runs the maintenance jobs, and closes without closing the app's client", async () => {
  const dir = mkdtempSync(join(tmpdir(), "idempotency-"));
  const db = database.connectDatabase(`file:${join(dir, "idempotency.db")}`);
  for (const statement of sqliteSchemaStatements(IDEMPOTENCY_TABLE)) await db.execute(statement);
  await checkWiring(database, db, { transactions: true });
  expect(db.closed).toBe(true);
  rmSync(dir, { recursive: true, force: true });
}, 30_000);
