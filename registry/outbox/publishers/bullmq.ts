// The relay's publisher for BullMQ: one job per message, its jobId the message id, so BullMQ itself drops a second copy.
import type { JobsOptions, Queue } from "bullmq";
import type { OutboxMessage, Publish } from "../relay-options";

export type BullmqPublisherOptions = {
  /** The job's data. BullMQ jobs have no headers: map `message.headers` in here if consumers need them. @default the payload */
  data?: ((message: OutboxMessage) => unknown) | undefined;
  /** Per-message job options (attempts, backoff, removeOnComplete...); `jobId` is always the message id. */
  jobOptions?: ((message: OutboxMessage) => JobsOptions) | undefined;
};

/**
 * Adds each message as a job named after its topic. A job whose id exists is not added again, so a
 * message published twice (a relay killed before marking it) is one job, as long as the first job
 * is still kept: with `removeOnComplete`, keep completed jobs for longer than a relay's lease.
 *
 * @example
 * const relay = startOutboxRelay({ db: pool, publish: bullmqPublisher(new Queue("orders", { connection })) });
 * // one queue per topic:
 * const publish = bullmqPublisher((message) => queues[message.topic]!);
 */
export function bullmqPublisher(
  queue: Queue | ((message: OutboxMessage) => Queue),
  options: BullmqPublisherOptions = {},
): Publish {
  return async function publishToBullmq(message) {
    const target = typeof queue === "function" ? queue(message) : queue;
    const data = options.data ? options.data(message) : message.payload;
    await target.add(message.topic, data, { ...options.jobOptions?.(message), jobId: message.id });
  };
}
