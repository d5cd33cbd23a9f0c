// Checks this app's idempotency wiring on Redis (REDIS_URL): one run per key, maintenance, a clean close.
import { expect, it } from "vitest";
import { checkWiring } from "./testing/check-wiring";
import * as database from "./database-redis";

it.skipIf(!process.env.REDIS_URL)(
  "runs an operation once per key, runs the maintenance jobs, and closes without closing the app's client (needs REDIS_URL)",
  async () => {
    const db = database.connectDatabase();
    await checkWiring(database, db, { transactions: false });
    // quit() resolves on Redis's reply; the socket closes just after.
    if (db.status !== "end") await new Promise((ended) => db.once("end", ended));
    expect(db.status).toBe("end");
  },
  30_000,
);
