// amqpConsumer against a real RabbitMQ (AMQP_URL), through the consumer contract; a message without an id reaches the dead-letter queue.
import { randomUUID } from "node:crypto";
import { connect, type Channel, type ConsumeMessage } from "amqplib";
import { amqpConsumer } from "@/blocks/idempotency/consumers/amqp";
import { consumerContract, type BrokerHarness } from "../support/consumer-contract";

const amqpUrl = process.env.AMQP_URL;

async function openRabbitMq(): Promise<BrokerHarness> {
  const connection = await connect(amqpUrl as string);
  const admin = await connection.createChannel();
  const queue = `inbox-test-${randomUUID()}`;
  const deadLetters = `${queue}-dlq`;
  await admin.assertQueue(deadLetters, { autoDelete: false, durable: false });
  await admin.assertQueue(queue, {
    durable: false,
    arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": deadLetters },
  });
  const channels: Channel[] = [];
  let inFlight = 0;
  return {
    async start(handler, options, process, workers = 1) {
      for (let i = 0; i < workers; i++) {
        const channel = await connection.createChannel();
        await channel.prefetch(1);
        channels.push(channel);
        const onMessage = amqpConsumer(channel, handler, { ...options, requeueDelayMs: 50 }, (payload) =>
          process(payload),
        );
        await channel.consume(queue, (message: ConsumeMessage | null) => {
          inFlight++;
          void onMessage(message).finally(() => inFlight--);
        });
      }
    },
    async publish(messageId, payload) {
      admin.sendToQueue(queue, Buffer.from(JSON.stringify(payload)), messageId === undefined ? {} : { messageId });
      await admin.checkQueue(queue); // a round trip: the message is queued before the test goes on
    },
    async pending() {
      return (await admin.checkQueue(queue)).messageCount + inFlight;
    },
    async close() {
      for (const channel of channels) await channel.close();
      await admin.deleteQueue(queue);
      await admin.deleteQueue(deadLetters);
      await connection.close();
    },
  };
}

consumerContract("[AMQP_URL] amqplib", openRabbitMq, !amqpUrl);
