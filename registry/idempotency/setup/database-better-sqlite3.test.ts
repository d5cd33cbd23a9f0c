// Checks this app's idempotency wiring on SQLite (better-sqlite3) in a temporary file: one run per key, in a transaction too, maintenance, a clean close.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { sqliteSchemaStatements } from "../stores/sqlite-schema";
import { IDEMPOTENCY_TABLE } from "./table";
import { checkWiring } from "./testing/check-wiring";
import * as database from "./database-better-sqlite3";

it("runs an operation once per key (in a transaction too), runs the maintenance jobs, and closes without closing the app's client", async () => {
  const dir = mkdtempSync(join(tmpdir(), "idempotency-"));
  const db = database.connectDatabase(join(dir, "idempotency.db"));
  for (const statement of sqliteSchemaStatements(IDEMPOTENCY_TABLE)) db.exec(statement);
  await checkWiring(database, db, { transactions: true });
  expect(db.open).toBe(false);
  rmSync(dir, { recursive: true, force: true });
}, 30_000);
