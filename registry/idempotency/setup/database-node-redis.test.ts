// Checks this app's idempotency wiring on Redis through node-redis (REDIS_URL): one run per key, maintenance, a clean close.
import { expect, it } from "vitest";
import { checkWiring } from "./testing/check-wiring";
import * as database from "./database-node-redis";

it.skipIf(!process.env.REDIS_URL)(
  "runs an operation once per key, runs the maintenance jobs, and closes without closing the app's client (needs REDIS_URL)",
  async () => {
    const db = database.connectDatabase();
    await checkWiring(database, db, { transactions: false });
    expect(db.isOpen).toBe(false);
  },
  30_000,
);
