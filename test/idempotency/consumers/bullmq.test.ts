// idempotentProcessor against a real Redis (REDIS_URL) through the consumer contract: BullMQ workers, retries and stalled jobs.
import { randomUUID } from "node:crypto";
import { Queue, Worker } from "bullmq";
import { idempotentProcessor } from "@/blocks/idempotency/consumers/bullmq";
import { consumerContract, type BrokerHarness } from "../support/consumer-contract";

const redisUrl = process.env.REDIS_URL;
type Delivery = { payload: unknown; messageId?: string };

async function openBullmq(): Promise<BrokerHarness> {
  const connection = { url: redisUrl as string };
  const prefix = `inbox_bull_${randomUUID().slice(0, 8)}`;
  const name = "payments";
  const queue = new Queue<Delivery>(name, { connection, prefix });
  const workers: Worker[] = [];
  let sent = 0;
  return {
    async start(handler, options, process, count = 1) {
      for (let i = 0; i < count; i++) {
        const processor = idempotentProcessor<unknown, Delivery>(handler, { ...options, getMessageId: (job) => job.data.messageId }, (job) => process(job.data.payload));
        workers.push(new Worker(name, processor, { connection, prefix, concurrency: 1 }));
      }
      await Promise.all(workers.map((worker) => worker.waitUntilReady()));
    },
    async publish(messageId, payload) {
      // BullMQ refuses a second job under one jobId: a redelivery is a second job carrying the same message id.
      sent++;
      const data: Delivery = messageId === undefined ? { payload } : { payload, messageId };
      await queue.add("capture", data, { jobId: `job-${sent}`, attempts: 10, backoff: { type: "fixed", delay: 50 } });
    },
    async pending() {
      const counts = await queue.getJobCounts("waiting", "active", "delayed", "prioritized", "waiting-children");
      return Object.values(counts).reduce((sum, count) => sum + count, 0);
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.close()));
      await queue.obliterate({ force: true });
      await queue.close();
    },
  };
}

consumerContract("[REDIS_URL] BullMQ", openBullmq, !redisUrl);
