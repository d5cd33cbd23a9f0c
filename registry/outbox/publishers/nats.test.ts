// natsPublisher against a real NATS server with JetStream (NATS_URL): the stream stores a message published twice once.
import { randomUUID } from "node:crypto";
import { connect } from "nats";
import { expect, it } from "vitest";
import type { OutboxMessage } from "../relay-options";
import { natsPublisher } from "./nats";

const natsUrl = process.env.NATS_URL;

it.skipIf(!natsUrl)("[NATS_URL] a message published twice is stored once (Nats-Msg-Id = message id)", async () => {
  const nc = await connect({ servers: natsUrl as string });
  const jsm = await nc.jetstreamManager();
  const name = `outbox_test_${randomUUID().slice(0, 8)}`;
  await jsm.streams.add({ name, subjects: [`${name}.>`] });
  try {
    const publish = natsPublisher(nc.jetstream(), { subject: (message) => `${name}.${message.topic}` });
    const message: OutboxMessage = {
      id: randomUUID(),
      topic: "order.created",
      key: "ord_1",
      payload: { amount: 1200 },
      headers: {},
      attempt: 1,
      createdAt: new Date(),
    };
    await publish(message);
    await publish({ ...message, attempt: 2 });
    const stored = await jsm.streams.getMessage(name, { seq: 1 });
    expect([(await jsm.streams.info(name)).state.messages, stored.header.get("Nats-Msg-Id"), stored.json()]).toEqual([
      1,
      message.id,
      { amount: 1200 },
    ]);
  } finally {
    await jsm.streams.delete(name);
    await nc.drain();
  }
});
