// The real brokers the publisher tests use, each under names of its own (the servers are shared).
import { uniqueName } from "./outbox-tables";

export const redisUrl = process.env.REDIS_URL;
export const amqpUrl = process.env.AMQP_URL;
export const natsUrl = process.env.NATS_URL;

/** A BullMQ queue under a prefix no one else uses; `close()` removes its keys. */
export async function openQueue(name = uniqueName("outbox_q")) {
  const { Queue } = await import("bullmq");
  const prefix = uniqueName("outbox_bull");
  const queue = new Queue(name, { connection: { url: redisUrl as string }, prefix });
  return {
    queue,
    name,
    prefix,
    async close() {
      await queue.obliterate({ force: true });
      await queue.close();
    },
  };
}

/** A JetStream stream capturing `<subject>.>`; `close()` deletes it and drains the connection. */
export async function openStream() {
  const { connect } = await import("nats");
  const nc = await connect({ servers: natsUrl as string });
  const jsm = await nc.jetstreamManager();
  const name = uniqueName("outbox_stream");
  const subject = uniqueName("outbox");
  await jsm.streams.add({ name, subjects: [`${subject}.>`] });
  return {
    jetstream: nc.jetstream(),
    name,
    subject,
    /** Messages the stream holds. */
    messages: async () => (await jsm.streams.info(name)).state.messages,
    async close() {
      await jsm.streams.delete(name);
      await nc.drain();
    },
  };
}
