// addToOutbox: one INSERT in the caller's transaction, so the message exists exactly when the transaction's writes do.
import { randomUUID } from "node:crypto";
import { OUTBOX_INVALID_MESSAGE, OutboxError } from "./errors";
import { checkTableName, DEFAULT_OUTBOX_TABLE } from "./postgres-schema";
import { toSqlClient, type OutboxDatabase } from "./sql-client";

export type NewOutboxMessage = {
  /** What happened, e.g. "order.created": the publisher maps it to a queue, routing key or subject. */
  topic: string;
  /** Any JSON value; stored as JSONB and handed to the publisher as read back. */
  payload: unknown;
  /** The aggregate the event is about (an order id): publishers pass it on (routing key, job group). */
  key?: string | undefined;
  /** String headers the publisher sends with the message (trace context, tenant). */
  headers?: Record<string, string> | undefined;
  /** Publish no sooner than this many milliseconds after the transaction started. */
  delayMs?: number | undefined;
};

export type AddToOutboxOptions = {
  /** @default "outbox_messages" */
  table?: string | undefined;
  /**
   * Also `pg_notify(table)` in the same statement, delivered at commit, so a relay started with
   * `listen` publishes at once instead of at its next poll. PostgreSQL serialises commits that
   * notify, so leave it off where the insert rate is high and polling is fast enough. @default false
   */
  notify?: boolean | undefined;
};

const MAX_TOPIC_LENGTH = 255;

/**
 * Writes one message into the outbox inside your transaction and returns its id (a UUID), which
 * every publisher sends as the message id so the consumer's inbox can drop a second delivery.
 * Rolled back, the message never existed.
 *
 * @example
 * await pool.query("BEGIN");
 * await client.query("INSERT INTO orders ...", [...]);
 * const messageId = await addToOutbox(client, { topic: "order.created", key: order.id, payload: order });
 * await client.query("COMMIT");
 */
export async function addToOutbox(
  tx: OutboxDatabase,
  message: NewOutboxMessage,
  options: AddToOutboxOptions = {},
): Promise<string> {
  const table = checkTableName(options.table ?? DEFAULT_OUTBOX_TABLE);
  const { topic, key, headers, delayMs } = checkMessage(message);
  const id = randomUUID();
  // JSON goes in as text: a driver that prepares the statement (postgres.js) would see a jsonb parameter
  // and encode the already-encoded string again, storing a JSON string instead of the object.
  const insert = `INSERT INTO ${table} (id, topic, key, payload, headers, available_at)
VALUES ($1::uuid, $2::text, $3::text, $4::text::jsonb, $5::text::jsonb, now() + $6::double precision * interval '1 millisecond')`;
  // One statement either way: the notification rides on the insert, so it cannot be sent for a row that is not there.
  // pg_notify's void stays out of the result: Prisma refuses to read a void column.
  const text = options.notify
    ? `WITH inserted AS (${insert} RETURNING 1) SELECT 1 AS notified FROM inserted, LATERAL (SELECT pg_notify('${table}', '')) AS n`
    : insert;
  await toSqlClient(tx).query(text, [
    id,
    topic,
    key ?? null,
    JSON.stringify(message.payload),
    JSON.stringify(headers ?? {}),
    delayMs ?? 0,
  ]);
  return id;
}

function checkMessage(message: NewOutboxMessage): NewOutboxMessage {
  const fail = (problem: string): never => {
    throw new OutboxError(OUTBOX_INVALID_MESSAGE, `addToOutbox: ${problem}.`);
  };
  if (typeof message !== "object" || message === null)
    fail("the message must be an object { topic, payload, key?, headers?, delayMs? }");
  const { topic, payload, key, headers, delayMs } = message;
  if (typeof topic !== "string" || topic.length === 0 || topic.length > MAX_TOPIC_LENGTH)
    fail(`"topic" must be a non-empty string of at most ${MAX_TOPIC_LENGTH} characters`);
  if (
    payload === undefined ||
    typeof payload === "function" ||
    typeof payload === "symbol" ||
    typeof payload === "bigint"
  ) {
    fail(`"payload" must be a JSON value (got ${typeof payload}); convert BigInt amounts to strings`);
  }
  if (key !== undefined && typeof key !== "string") fail(`"key" must be a string when given (got ${typeof key})`);
  if (headers !== undefined) {
    if (typeof headers !== "object" || headers === null || Array.isArray(headers))
      fail('"headers" must be an object of strings');
    for (const [name, value] of Object.entries(headers))
      if (typeof value !== "string") fail(`header "${name}" must be a string (got ${typeof value})`);
  }
  if (delayMs !== undefined && !(Number.isFinite(delayMs) && delayMs >= 0))
    fail(`"delayMs" must be a finite number >= 0 (got ${String(delayMs)})`);
  return message;
}
