// natsConsumer against a real NATS server with JetStream (NATS_URL), through the consumer contract.
import { randomUUID } from "node:crypto";
import { AckPolicy, connect, type ConsumerMessages } from "nats";
import { natsConsumer } from "@/blocks/idempotency/consumers/nats";
import { consumerContract, type BrokerHarness } from "../support/consumer-contract";

const natsUrl = process.env.NATS_URL;

async function openJetStream(): Promise<BrokerHarness> {
  const nc = await connect({ servers: natsUrl as string });
  const jsm = await nc.jetstreamManager();
  const name = `inbox_test_${randomUUID().slice(0, 8)}`;
  await jsm.streams.add({ name, subjects: [`${name}.>`], duplicate_window: 100_000_000 });
  await jsm.consumers.add(name, {
    durable_name: "worker",
    ack_policy: AckPolicy.Explicit,
    ack_wait: 30_000_000_000,
    max_deliver: 20,
  });
  const js = nc.jetstream();
  const loops: ConsumerMessages[] = [];
  const seen = new Set<string>();
  return {
    async start(handler, options, process, workers = 1) {
      const handle = natsConsumer(handler, { ...options, redeliverDelayMs: 50 }, (payload) => process(payload));
      for (let i = 0; i < workers; i++) {
        const messages = await (await js.consumers.get(name, "worker")).consume({ max_messages: 1 });
        loops.push(messages);
        void (async () => {
          for await (const message of messages) void handle(message);
        })();
      }
    },
    async publish(messageId, payload) {
      // The stream drops a repeated Nats-Msg-Id within its window (100 ms here): a repeat waits it out,
      // as a redelivery or a publish retried after the window reaches the consumer.
      if (messageId !== undefined && seen.has(messageId)) await new Promise((resolve) => setTimeout(resolve, 150));
      if (messageId !== undefined) seen.add(messageId);
      await js.publish(
        `${name}.payments`,
        JSON.stringify(payload),
        messageId === undefined ? {} : { msgID: messageId },
      );
    },
    async pending() {
      const info = await jsm.consumers.info(name, "worker");
      return info.num_pending + info.num_ack_pending;
    },
    async close() {
      for (const messages of loops) messages.stop();
      await jsm.streams.delete(name);
      await nc.drain();
    },
  };
}

consumerContract("[NATS_URL] NATS JetStream", openJetStream, !natsUrl);
