// A RabbitMQ consumer process: each message's effect is one row written in the inbox's transaction. With a hold
// message count it tells its parent it is inside that message's transaction (effect written, not committed) and hangs.
import { connect, type ConsumeMessage } from "amqplib";
import pg from "pg";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { deliveryVerdict, parseJsonBody } from "@/blocks/idempotency/consumers/delivery";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { pgClient, type PgTransaction } from "@/blocks/idempotency/stores/clients/pg";

const [queue, table, effectsTable, workerId, holdAt] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 8 });
const handler = new IdempotencyHandler<PgTransaction>(new PostgresStore(pgClient(pool), { table }), undefined, {
  maxRetries: 5,
});
const connection = await connect(process.env.AMQP_URL as string);
const channel = await connection.createChannel();
await channel.prefetch(4);
let started = 0;

await channel.consume(queue, (message: ConsumeMessage | null) => {
  if (message === null) return;
  void (async () => {
    const verdict = await deliveryVerdict(() =>
      handler.consumeInTransaction(
        {
          source: "payments",
          messageId: message.properties.messageId as string,
          payload: parseJsonBody(message.content),
        },
        async ({ tx, key }) => {
          await tx.query(`INSERT INTO ${effectsTable} (key, user_id, worker) VALUES ($1, 'inbox', $2)`, [
            key.key,
            workerId,
          ]);
          if (++started === Number(holdAt)) {
            process.send?.({ type: "event", event: "inside", key: key.key });
            await new Promise(() => {});
          }
          return null;
        },
      ),
    );
    if (verdict.action === "ack")
      process.send?.({ type: "event", event: verdict.result.outcome, key: message.properties.messageId as string });
    if (verdict.action === "ack") channel.ack(message);
    else channel.nack(message, false, verdict.action === "retry");
  })();
});
process.send?.({ type: "event", event: "consuming", key: "" });
