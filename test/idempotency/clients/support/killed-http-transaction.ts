// A child process serving one transactional route on one adapter and one client: it writes on ctx.tx, tells its parent,
// and waits to be killed before COMMIT.
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { transactionalApps, type AdapterName, type Queryable } from "./transactional-apps";
import { openTransactionalClient, type TransactionalClientName } from "./transactional-kinds";

const [adapter, client, location, table, writes, key] = process.argv.slice(2) as [
  AdapterName,
  TransactionalClientName,
  string,
  string,
  string,
  string,
];
const opened = await openTransactionalClient(client, location);
// Every decision goes to stdout, so the parent can see that none claimed a commit.
const line = (level: string) => (obj: object, msg: string) =>
  void process.stdout.write(`${JSON.stringify({ level, msg, ...obj })}\n`);
const logger = { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error") };
const handler = new IdempotencyHandler(opened.store(table), undefined, { logger }) as IdempotencyHandler<Queryable>;
const app = await transactionalApps[adapter](handler, async (tx, routeKey) => {
  await opened.write(tx, writes, routeKey);
  process.send?.("inside the transaction, after the write");
  return new Promise(() => {}); // Never answers, so never commits: the parent sends SIGKILL now.
});
void app.post(key, { amount: 10 });
