// A BullMQ processor that runs each job once per job id (or `getMessageId(job)`), whatever BullMQ retries or re-runs.
import { UnrecoverableError, type Job } from "bullmq";
import { checkSource } from "../consume";
import type { IdempotencyHandler } from "../handler";
import type { OperationContext } from "../operation-context";
import { deliveryVerdict } from "./delivery";
import { splitConsumerOptions, type ConsumerOptions } from "./options";

/**
 * Wraps a processor: a job that already ran returns its stored result without running; a transient
 * failure throws, so BullMQ retries it (give the job `attempts` above the handler's `maxRetries`,
 * or BullMQ gives up before the message is dead and `onDead` never hears of it); a dead job
 * (`onDead` called) and a job that can never run (no usable id, its id reused with other data)
 * throw BullMQ's UnrecoverableError, which moves the job to the failed set without another attempt.
 * The job's `data` is the fingerprinted payload.
 *
 * @example
 * const worker = new Worker("payments", idempotentProcessor(handler, { source: "payments", onDead }, async (job, ctx) => {
 *   return applyPayment(job.data, ctx.signal);
 * }), { connection });
 * await queue.add("capture", data, { attempts: 5, backoff: { type: "exponential", delay: 1000 } });
 */
export function idempotentProcessor<T, D = unknown>(
  handler: IdempotencyHandler,
  options: ConsumerOptions<Job<D>>,
  process: (job: Job<D>, ctx: OperationContext) => Promise<T> | T,
): (job: Job<D>) => Promise<T> {
  const { source, getMessageId, consumeOptions } = splitConsumerOptions(options);
  checkSource(source);
  return async function processOnce(job) {
    const messageId = getMessageId ? getMessageId(job) : job.id;
    const verdict = await deliveryVerdict(() => handler.consume({ source, messageId: messageId as string, payload: job.data }, (ctx) => process(job, ctx), consumeOptions));
    if (verdict.action === "retry") throw verdict.error;
    if (verdict.action === "reject") throw new UnrecoverableError(`${errorMessage(verdict.error)} (job ${String(job.id)})`);
    if (verdict.result.outcome === "dead") throw new UnrecoverableError(`The job is dead (failed for good; onDead has it): ${errorMessage(verdict.result.error)}`);
    return verdict.result.response as T;
  };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
