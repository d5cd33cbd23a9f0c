// A child process that opens a transaction through one client adapter, writes, tells its parent, and waits to be killed.
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { openClient, type ClientName } from "../../support/client-harness";

const [client, table, writes, key] = process.argv.slice(2) as [ClientName, string, string, string];
const opened = await openClient(client);
const handler = new IdempotencyHandler(new PostgresStore(opened.client, { table }));
await handler.executeInTransaction({ operation: "orders:create", userId: "u_1", key, payload: { amount: 10 } }, async ({ tx }) => {
  await opened.write(tx, writes, key);
  process.send?.("inside the transaction, after the write");
  await new Promise(() => {}); // Never commits: the parent sends SIGKILL now.
});
