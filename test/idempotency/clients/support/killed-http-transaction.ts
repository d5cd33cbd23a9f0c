// A child process serving one transactional route on one adapter: it writes on ctx.tx, tells its parent, and waits to be killed before COMMIT.
import pg from "pg";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { pgClient } from "@/blocks/idempotency/stores/clients/pg";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { transactionalApps, type AdapterName } from "./transactional-apps";

const [adapter, table, key] = process.argv.slice(2) as [AdapterName, string, string];
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
// Every decision goes to stdout, so the parent can see that none claimed a commit.
const line = (level: string) => (obj: object, msg: string) => void process.stdout.write(`${JSON.stringify({ level, msg, ...obj })}\n`);
const logger = { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error") };
const handler = new IdempotencyHandler(new PostgresStore(pgClient(pool), { table }), undefined, { logger });
const app = await transactionalApps[adapter](handler, async (tx, routeKey, amount) => {
  await tx.query(`INSERT INTO ${table}_orders (key, amount) VALUES ($1, $2)`, [routeKey, amount]);
  process.send?.("inside the transaction, after the write");
  return new Promise(() => {}); // Never answers, so never commits: the parent sends SIGKILL now.
});
void app.post(key, { amount: 10 });
