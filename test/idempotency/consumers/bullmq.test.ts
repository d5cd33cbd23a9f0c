// idempotentProcessor against a real Redis (REDIS_URL) through the consumer contract: BullMQ workers, retries and stalled jobs.
import { randomUUID } from "node:crypto";
import { Queue, Worker } from "bullmq";
import { describe, expect, it, vi } from "vitest";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
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
        const processor = idempotentProcessor<unknown, Delivery>(
          handler,
          { ...options, getMessageId: (job) => job.data.messageId },
          (job) => process(job.data.payload),
        );
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

describe.skipIf(!redisUrl)("[REDIS_URL] BullMQ: the job's own attempts", () => {
  class Timeout extends Error {}
  async function deadAfter(attempts: number | undefined, maxRetries: number) {
    const connection = { url: redisUrl as string };
    const prefix = `inbox_bull_${randomUUID().slice(0, 8)}`;
    const queue = new Queue("payments", { connection, prefix });
    const dead: unknown[] = [];
    let calls = 0;
    const handler = new IdempotencyHandler(new MemoryStore(), undefined, { maxRetries });
    const processor = idempotentProcessor(
      handler,
      { source: "payments", onDead: (_message, err) => void dead.push(err) },
      () => {
        calls++;
        throw new Timeout("the processor timed out");
      },
    );
    const worker = new Worker("payments", processor, { connection, prefix });
    try {
      await queue.add(
        "capture",
        { amount: 1 },
        { jobId: "job-1", ...(attempts ? { attempts, backoff: { type: "fixed", delay: 20 } } : {}) },
      );
      await vi.waitFor(async () => expect(await queue.getJobCounts("failed")).toEqual({ failed: 1 }), {
        timeout: 15_000,
        interval: 20,
      });
      const job = await queue.getJob("job-1");
      return { dead, calls, failedReason: job?.failedReason };
    } finally {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  }

  it("BullMQ's default (1 attempt): a transient failure is its last, so onDead hears of the message before BullMQ gives up", async () => {
    const { dead, calls, failedReason } = await deadAfter(undefined, 3);
    expect(calls).toBe(1);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toBeInstanceOf(Timeout);
    expect(failedReason).toMatch(/dead/);
  });

  it("attempts below maxRetries: the job's third and last attempt makes it dead, once", async () => {
    const { dead, calls } = await deadAfter(3, 10);
    expect(calls).toBe(3);
    expect(dead).toHaveLength(1);
  });
});
