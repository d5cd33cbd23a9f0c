// A child process running one relay whose publish reaches the broker, tells its parent, and never returns: the parent SIGKILLs it before the row is marked.
import pg from "pg";
import { Queue } from "bullmq";
import { connect } from "nats";
import { connect as connectAmqp } from "amqplib";
import { amqpPublisher } from "@/blocks/outbox/publishers/amqp";
import { bullmqPublisher } from "@/blocks/outbox/publishers/bullmq";
import { natsPublisher } from "@/blocks/outbox/publishers/nats";
import { startOutboxRelay } from "@/blocks/outbox/relay";
import type { Publish } from "@/blocks/outbox/relay-options";

const [broker, table, name, prefixOrSubject] = process.argv.slice(2) as [
  "bullmq" | "nats" | "amqp",
  string,
  string,
  string,
];

async function brokerPublisher(): Promise<Publish> {
  if (broker === "amqp")
    return amqpPublisher(await (await connectAmqp(process.env.AMQP_URL as string)).createConfirmChannel(), {
      exchange: name,
    });
  if (broker === "bullmq")
    return bullmqPublisher(
      new Queue(name, { connection: { url: process.env.REDIS_URL as string }, prefix: prefixOrSubject }),
    );
  const nc = await connect({ servers: process.env.NATS_URL as string });
  return natsPublisher(nc.jetstream(), { subject: (message) => `${prefixOrSubject}.${message.topic}` });
}

const publish = await brokerPublisher();
startOutboxRelay({
  db: new pg.Pool({ connectionString: process.env.DATABASE_URL }),
  table,
  pollMs: 20,
  leaseMs: 2000,
  publishTimeoutMs: 1500,
  publish: async (message) => {
    await publish(message);
    process.send?.("published");
    await new Promise(() => {});
  },
});
