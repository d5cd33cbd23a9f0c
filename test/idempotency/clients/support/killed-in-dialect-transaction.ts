// A child process that opens a transaction on MySqlStore or SqliteStore, writes, tells its parent, and waits to be killed.
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { openDialectClient, type DialectClientName } from "./dialect-clients";

const [client, location, table, writes, key] = process.argv.slice(2) as [DialectClientName, string, string, string, string];
const opened = await openDialectClient(client, location);
const handler = new IdempotencyHandler(opened.store(table));
await handler.executeInTransaction({ operation: "orders:create", userId: "u_1", key, payload: { amount: 10 } }, async ({ tx }) => {
  await opened.write(tx, writes, key);
  process.send?.("inside the transaction, after the write");
  await new Promise(() => {}); // Never commits: the parent sends SIGKILL now.
});
