// Scenario 12: outbox -> RabbitMQ -> inbox, end to end. A relay SIGKILLed between the broker's confirm and marking its row
// publishes what it sent again (the outbox is at-least-once, and RabbitMQ does not dedupe); the inbox runs each message once.
import { fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { connect, type Channel, type ChannelModel, type ConsumeMessage } from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { amqpConsumer } from "@/blocks/idempotency/consumers/amqp";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { pgClient } from "@/blocks/idempotency/stores/clients/pg";
import { addToOutbox } from "@/blocks/outbox/add-to-outbox";
import { amqpPublisher } from "@/blocks/outbox/publishers/amqp";
import { startOutboxRelay } from "@/blocks/outbox/relay";
import { freshOutbox, until } from "../outbox/support/outbox-tables";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { missingServices } from "./support/services";

const amqpUrl = process.env.AMQP_URL;
const MESSAGES = 20;

describe.skipIf(missingServices() || !amqpUrl)(
  "[DATABASE_URL] [AMQP_URL] 12. outbox -> RabbitMQ -> inbox through a relay crash",
  () => {
    const figures = new FiguresCollector(12, "outbox -> RabbitMQ -> inbox, relay SIGKILLed between publish and mark");
    let db: ScenarioDb;
    let outbox: Awaited<ReturnType<typeof freshOutbox>>;
    let connection: ChannelModel;
    let channel: Channel;
    const exchange = `outbox-e2e-${randomUUID()}`;
    const queue = `${exchange}-inbox`;

    beforeAll(async () => {
      db = await openScenarioDb("e2e");
      outbox = await freshOutbox(db.pool, "outbox_e2e");
      connection = await connect(amqpUrl as string);
      channel = await connection.createChannel();
      await channel.assertExchange(exchange, "topic", { durable: false, autoDelete: true });
      await channel.assertQueue(queue, { durable: false });
      await channel.bindQueue(queue, exchange, "order.*");
    });
    afterAll(async () => {
      await channel?.deleteQueue(queue);
      await connection?.close();
      await outbox?.drop();
      await db?.close();
    });

    it("every message's effect happens once, though the broker delivered one of them twice", async () => {
      const ids: string[] = [];
      for (let i = 0; i < MESSAGES; i++)
        ids.push(
          await addToOutbox(db.pool, { topic: "order.created", payload: { order: i } }, { table: outbox.table }),
        );

      const child = fork(
        fileURLToPath(new URL("../outbox/support/killed-after-publish.ts", import.meta.url)),
        ["amqp", outbox.table, exchange, ""],
        {
          execArgv: ["--import", "tsx"],
          stdio: ["ignore", "ignore", "inherit", "ipc"],
        },
      );
      const exited = new Promise((resolve) => child.once("exit", resolve));
      await new Promise<void>((resolve, reject) => {
        child.once("message", () => resolve());
        void exited.then(() => reject(new Error("the relay exited before publishing")));
      });
      child.kill("SIGKILL");
      await exited;

      const handler = new IdempotencyHandler(new PostgresStore(pgClient(db.pool), { table: db.table }));
      const outcomes: string[] = [];
      const onMessage = amqpConsumer(
        channel,
        handler,
        { source: "orders" },
        async (_payload, message: ConsumeMessage) => {
          await db.pool.query(
            `INSERT INTO ${db.effectsTable} (key, user_id, worker) VALUES ($1, 'inbox', 'consumer')`,
            [message.properties.messageId],
          );
        },
      );
      let deliveries = 0;
      await channel.consume(queue, (message) => {
        deliveries++;
        void onMessage(message).then(() => outcomes.push("settled"));
      });

      const confirms = await connection.createConfirmChannel();
      const relay = startOutboxRelay({
        db: db.pool,
        table: outbox.table,
        pollMs: 20,
        publish: amqpPublisher(confirms, { exchange }),
      });
      await until(async () => (await db.executions()).size === MESSAGES, 30_000, "every message's effect");
      await until(
        async () =>
          (await db.pool.query(`SELECT count(*)::int AS n FROM ${outbox.table} WHERE published_at IS NULL`)).rows[0]
            .n === 0,
        30_000,
        "every row published",
      );
      await until(() => outcomes.length === deliveries, 30_000, "every delivery settled");
      await relay.stop();
      await confirms.close();

      const executions = await db.executions();
      for (let i = 0; i < deliveries; i++) figures.record(200, 0, false);
      figures.duplicatesServed = deliveries - sum(executions);
      expect([...executions.keys()].sort()).toEqual([...ids].sort());
      // The killed relay publishes its batch concurrently: every row it sent before the kill goes out again.
      expect(deliveries).toBeGreaterThan(MESSAGES);
      expect([sum(executions), doubleExecutions(executions)]).toEqual([MESSAGES, 0]);
      figures.save({
        executions: sum(executions),
        doubleExecutions: doubleExecutions(executions),
        notes: `${MESSAGES} outbox rows; the killed relay's batch was published again by the next relay (${deliveries} deliveries of ${MESSAGES} messages), and the inbox (amqpConsumer, messageId = outbox id) ran each once`,
      });
    });
  },
);
