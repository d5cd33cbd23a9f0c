// A relay SIGKILLed between the broker's acknowledgement and marking the row: the next relay publishes it again
// (at-least-once), and the broker's dedupe by message id leaves one message.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addToOutbox } from "@/blocks/outbox/add-to-outbox";
import { bullmqPublisher } from "@/blocks/outbox/publishers/bullmq";
import { natsPublisher } from "@/blocks/outbox/publishers/nats";
import { startOutboxRelay } from "@/blocks/outbox/relay";
import type { OutboxMessage, Publish } from "@/blocks/outbox/relay-options";
import { natsUrl, openQueue, openStream, redisUrl } from "./support/brokers";
import { databaseUrl, freshOutbox, until } from "./support/outbox-tables";

type Broker = {
  name: string;
  available: boolean;
  /** The broker's own publisher, the child's arguments after the table, how many messages the broker holds. */
  open(): Promise<{ publish: Publish; childArgs: string[]; count(): Promise<number>; close(): Promise<void> }>;
};

const brokers: Broker[] = [
  {
    name: "[DATABASE_URL] [REDIS_URL] BullMQ (jobId)",
    available: Boolean(databaseUrl && redisUrl),
    async open() {
      const { queue, name, prefix, close } = await openQueue();
      return {
        publish: bullmqPublisher(queue),
        childArgs: ["bullmq", name, prefix],
        count: async () => (await queue.getJobs(["waiting"])).length,
        close,
      };
    },
  },
  {
    name: "[DATABASE_URL] [NATS_URL] NATS JetStream (Nats-Msg-Id)",
    available: Boolean(databaseUrl && natsUrl),
    async open() {
      const stream = await openStream();
      return {
        publish: natsPublisher(stream.jetstream, { subject: (message) => `${stream.subject}.${message.topic}` }),
        childArgs: ["nats", stream.name, stream.subject],
        count: stream.messages,
        close: stream.close,
      };
    },
  },
];

for (const broker of brokers) {
  describe.skipIf(!broker.available)(`relay SIGKILLed after publishing, on ${broker.name}`, { timeout: 60_000 }, () => {
    let pool: pg.Pool;
    let outbox: Awaited<ReturnType<typeof freshOutbox>>;
    let target: Awaited<ReturnType<Broker["open"]>>;
    beforeAll(async () => {
      pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
      outbox = await freshOutbox(pool, "outbox_crash");
      target = await broker.open();
    });
    afterAll(async () => {
      await target?.close();
      await outbox?.drop();
      await pool?.end();
    });

    it("the next relay publishes the message again once the lease ends, and the broker holds it once", async () => {
      const id = await addToOutbox(
        pool,
        { topic: "order.created", payload: { amount: 1200 } },
        { table: outbox.table },
      );
      const [kind, ...rest] = target.childArgs as [string, ...string[]];
      const child = fork(
        fileURLToPath(new URL("./support/killed-after-publish.ts", import.meta.url)),
        [kind, outbox.table, ...rest],
        {
          execArgv: ["--import", "tsx"],
          stdio: ["ignore", "ignore", "pipe", "ipc"],
        },
      );
      let stderr = "";
      child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise((resolve) => child.once("exit", resolve));
      await new Promise<void>((resolve, reject) => {
        child.once("message", () => resolve());
        void exited.then(() => reject(new Error(`child exited before publishing:\n${stderr}`)));
      });
      child.kill("SIGKILL");
      await exited;
      const row = async () =>
        (
          await pool.query(
            `SELECT published_at IS NOT NULL AS published, attempts FROM ${outbox.table} WHERE id = $1`,
            [id],
          )
        ).rows[0];
      expect(await row()).toEqual({ published: false, attempts: 1 });
      expect(await target.count()).toBe(1);

      const republished: OutboxMessage[] = [];
      const relay = startOutboxRelay({
        db: pool,
        table: outbox.table,
        pollMs: 20,
        publish: async (message) => {
          await target.publish(message);
          republished.push(message);
        },
      });
      await until(async () => (await row()).published, 20_000, "published by the next relay");
      await relay.stop();
      expect(republished.map((message) => [message.id, message.attempt])).toEqual([[id, 2]]);
      expect(await target.count()).toBe(1);
    });
  });
}
