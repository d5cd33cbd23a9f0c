// amqpPublisher against a real RabbitMQ (AMQP_URL): confirmed, persistent, messageId = message id; an unroutable message fails.
import { randomUUID } from "node:crypto";
import { connect } from "amqplib";
import { expect, it } from "vitest";
import type { OutboxMessage } from "../relay-options";
import { amqpPublisher } from "./amqp";

const amqpUrl = process.env.AMQP_URL;
const message = (topic: string): OutboxMessage => ({
  id: randomUUID(),
  topic,
  key: "ord_1",
  payload: { amount: 1200 },
  headers: {},
  attempt: 1,
  createdAt: new Date(),
});

it.skipIf(!amqpUrl)(
  "[AMQP_URL] the consumer gets the message id as messageId, persistent; a message no queue takes fails the publish",
  async () => {
    const connection = await connect(amqpUrl as string);
    try {
      const channel = await connection.createConfirmChannel();
      const exchange = `outbox-test-${randomUUID()}`;
      await channel.assertExchange(exchange, "topic", { durable: false, autoDelete: true });
      const { queue } = await channel.assertQueue("", { exclusive: true });
      await channel.bindQueue(queue, exchange, "order.*");
      const publish = amqpPublisher(channel, { exchange });

      const sent = message("order.created");
      await publish(sent);
      const got = await channel.get(queue, { noAck: true });
      expect(
        got && [got.properties.messageId, got.properties.deliveryMode, JSON.parse(got.content.toString())],
      ).toEqual([sent.id, 2, { amount: 1200 }]);

      await expect(publish(message("refund.created"))).rejects.toThrow(/no queue is bound/);
    } finally {
      await connection.close();
    }
  },
);
