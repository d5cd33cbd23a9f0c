// bullmqPublisher against a real Redis (REDIS_URL): one job per message id, however often it is published.
import { Queue } from "bullmq";
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { OutboxMessage } from "../relay-options";
import { bullmqPublisher } from "./bullmq";

const redisUrl = process.env.REDIS_URL;

it.skipIf(!redisUrl)(
  "[REDIS_URL] a message published twice (a relay died before marking it) is one job, its id the message id",
  async () => {
    const queue = new Queue<unknown>(`outbox-test-${randomUUID()}`, { connection: { url: redisUrl as string } });
    try {
      const publish = bullmqPublisher(queue);
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
      const jobs = await queue.getJobs(["waiting"]);
      expect(jobs.map((job) => [job.id, job.name, job.data])).toEqual([
        [message.id, "order.created", { amount: 1200 }],
      ]);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  },
);
