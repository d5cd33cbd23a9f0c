// Each publisher against its real broker: the message id arrives as the broker's message id, and a second publish of one message is one message where the broker dedupes.
import { describe, expect, it } from "vitest";
import type { OutboxMessage } from "@/blocks/outbox/relay-options";
import { amqpPublisher } from "@/blocks/outbox/publishers/amqp";
import { bullmqPublisher } from "@/blocks/outbox/publishers/bullmq";
import { natsPublisher } from "@/blocks/outbox/publishers/nats";
import { amqpUrl, natsUrl, openQueue, openStream, redisUrl } from "./support/brokers";
import { uniqueName } from "./support/outbox-tables";

const message = (topic: string, extra: Partial<OutboxMessage> = {}): OutboxMessage => ({
  id: crypto.randomUUID(),
  topic,
  key: "ord_1",
  payload: { amount: 1200 },
  headers: { tenant: "acme" },
  attempt: 1,
  createdAt: new Date(),
  ...extra,
});

describe.skipIf(!redisUrl)("[REDIS_URL] bullmqPublisher", { timeout: 30_000 }, () => {
  it("adds one job named after the topic with jobId = message id, and a second publish adds nothing", async () => {
    const { queue, close } = await openQueue();
    try {
      const publish = bullmqPublisher(queue);
      const sent = message("order.created");
      await publish(sent);
      await publish({ ...sent, attempt: 2 });
      const jobs = await queue.getJobs(["waiting"]);
      expect(jobs.map((job) => [job.id, job.name, job.data])).toEqual([[sent.id, "order.created", { amount: 1200 }]]);
    } finally {
      await close();
    }
  });
});

describe.skipIf(!amqpUrl)("[AMQP_URL] amqpPublisher", { timeout: 30_000 }, () => {
  async function open() {
    const amqp = await import("amqplib");
    const connection = await amqp.connect(amqpUrl as string);
    const channel = await connection.createConfirmChannel();
    const exchange = uniqueName("outbox_ex");
    await channel.assertExchange(exchange, "topic", { durable: false, autoDelete: true });
    const { queue } = await channel.assertQueue("", { exclusive: true });
    await channel.bindQueue(queue, exchange, "order.*");
    return { channel, exchange, queue, close: () => connection.close() };
  }

  it("publishes a persistent message with messageId = message id, confirmed by the broker", async () => {
    const { channel, exchange, queue, close } = await open();
    try {
      const sent = message("order.created");
      await amqpPublisher(channel, { exchange })(sent);
      const got = await channel.get(queue, { noAck: true });
      expect(got && [got.properties.messageId, got.properties.deliveryMode, got.properties.type, got.properties.headers, JSON.parse(got.content.toString())]).toEqual([
        sent.id,
        2,
        "order.created",
        { tenant: "acme", "x-outbox-key": "ord_1" },
        { amount: 1200 },
      ]);
    } finally {
      await close();
    }
  });

  it("fails a message no queue is bound for (a confirm alone would have dropped it silently)", async () => {
    const { channel, exchange, close } = await open();
    try {
      const publish = amqpPublisher(channel, { exchange });
      await expect(publish(message("refund.created"))).rejects.toThrow(/no queue is bound to exchange .* for routing key "refund.created"/);
      await expect(publish(message("order.created"))).resolves.toBeUndefined();
    } finally {
      await close();
    }
  });
});

describe.skipIf(!natsUrl)("[NATS_URL] natsPublisher", { timeout: 30_000 }, () => {
  it("sends Nats-Msg-Id = message id, so JetStream stores a message published twice once", async () => {
    const stream = await openStream();
    try {
      const publish = natsPublisher(stream.jetstream, { subject: (sent) => `${stream.subject}.${sent.topic}` });
      const sent = message("order.created");
      await publish(sent);
      await publish({ ...sent, attempt: 2 });
      await publish(message("order.created"));
      expect(await stream.messages()).toBe(2);
    } finally {
      await stream.close();
    }
  });
});
