// Checks this app's idempotency wiring on an embedded PostgreSQL (PGlite): one run per key, maintenance, a clean close.
import { PGlite } from "@electric-sql/pglite";
import { expect, it } from "vitest";
import { postgresSchemaStatements } from "../stores/postgres-schema";
import { IDEMPOTENCY_TABLE } from "./table";
import { checkWiring } from "./testing/check-wiring";
// The default client: "./database" is this variant (in a project, the one `add` chose; here, the stand-in re-exporting it).
import * as database from "./database";

it("runs an operation once per key, runs the maintenance jobs, and closes without closing the app's client", async () => {
  const pglite = new PGlite();
  for (const statement of postgresSchemaStatements(IDEMPOTENCY_TABLE)) await pglite.query(statement);
  const db: database.Database = { query: (text, params) => pglite.query(text, params), end: () => pglite.close() };
  await checkWiring(database, db, { transactions: false });
  expect(pglite.closed).toBe(true);
  // A first PGlite start can take several seconds on a busy CI runner.
}, 30_000);
