// A child process that opens a transaction through one client adapter (any dialect), writes, tells its parent, and waits to be killed.
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { openTransactionalClient, type TransactionalClientName } from "./transactional-kinds";

const [client, location, table, writes, key] = process.argv.slice(2) as [
  TransactionalClientName,
  string,
  string,
  string,
  string,
];
const opened = await openTransactionalClient(client, location);
const handler = new IdempotencyHandler(opened.store(table));
await handler.executeInTransaction(
  { operation: "orders:create", userId: "u_1", key, payload: { amount: 10 } },
  async ({ tx }) => {
    await opened.write(tx, writes, key);
    process.send?.("inside the transaction, after the write");
    await new Promise(() => {}); // Never commits: the parent sends SIGKILL now.
  },
);
