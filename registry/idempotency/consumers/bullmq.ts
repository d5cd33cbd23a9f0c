// A BullMQ processor that runs each job once per job id (or `getMessageId(job)`), whatever BullMQ retries or re-runs.
import { UnrecoverableError, type Job } from "bullmq";
import { checkSource } from "../consume";
import type { IdempotencyHandler } from "../handler";
import type { OperationContext } from "../operation-context";
import { deliveryVerdict } from "./delivery";
import { splitConsumerOptions, type ConsumerOptions } from "./options";

/**
 * Wraps a processor: a job that already ran returns its stored result without running; a transient
 * failure throws, so BullMQ retries it while the job has `attempts` left. On the job's last attempt
 * (BullMQ's default `attempts` is 1) a transient failure spends the rest of the key's budget
 * (`lastAttempt`), so the message is dead and `onDead` hears of it before BullMQ gives up on the
 * job; give jobs `attempts` above the handler's `maxRetries` to let the handler's own budget decide. A dead job
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
    const options = isLastAttempt(job) ? { ...consumeOptions, lastAttempt: true } : consumeOptions;
    const verdict = await deliveryVerdict(() =>
      handler.consume(
        { source, messageId: messageId as string, payload: job.data },
        (ctx) => process(job, ctx),
        options,
      ),
    );
    if (verdict.action === "retry") throw verdict.error;
    if (verdict.action === "reject")
      throw new UnrecoverableError(`${errorMessage(verdict.error)} (job ${String(job.id)})`);
    if (verdict.result.outcome === "dead")
      throw new UnrecoverableError(
        `The job is dead (failed for good; onDead has it): ${errorMessage(verdict.result.error)}`,
      );
    return verdict.result.response as T;
  };
}

/** BullMQ will not run the job again if this attempt fails: `attemptsMade` counts the failed ones before it. */
function isLastAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= Math.max(1, job.opts.attempts ?? 1);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
