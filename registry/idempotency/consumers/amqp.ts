// An amqplib `channel.consume` callback that runs each message once per `properties.messageId` (or `getMessageId`).
import type { Channel, ConsumeMessage } from "amqplib";
import { checkSource } from "../consume";
import type { IdempotencyHandler } from "../handler";
import type { OperationContext } from "../operation-context";
import { sleep } from "../utils/time-limit";
import { deliveryVerdict, parseJsonBody } from "./delivery";
import { splitConsumerOptions, type ConsumerOptions } from "./options";

export type AmqpConsumerOptions = ConsumerOptions<ConsumeMessage> & {
  /** How long a message that should come again is held before it is requeued, so a failing one does not spin. @default 1_000 */
  requeueDelayMs?: number | undefined;
  /** The payload to fingerprint and hand on. @default the body parsed as JSON (a body that is not JSON is rejected) */
  parse?: ((message: ConsumeMessage) => unknown) | undefined;
};

/**
 * Acks a message that ran, was a duplicate, or is dead (after `onDead`); nacks with requeue one
 * that should come again (after `requeueDelayMs`); nacks without requeue (to the queue's
 * dead-letter exchange, if it has one) one that can never run: no `messageId`, a body that is not
 * JSON, or an id reused with another body. Consume with `noAck: false`; the returned promise never
 * rejects (a channel that closed meanwhile has its unacked messages redelivered by the broker).
 *
 * @example
 * await channel.prefetch(10);
 * await channel.consume("payments", amqpConsumer(channel, handler, { source: "payments", onDead }, async (payload, msg, ctx) => {
 *   await applyPayment(payload, ctx.signal);
 * }));
 */
export function amqpConsumer<T>(
  channel: Pick<Channel, "ack" | "nack">,
  handler: IdempotencyHandler,
  options: AmqpConsumerOptions,
  process: (payload: unknown, message: ConsumeMessage, ctx: OperationContext) => Promise<T> | T,
): (message: ConsumeMessage | null) => Promise<void> {
  const { requeueDelayMs = 1_000, parse, ...rest } = options;
  const { source, getMessageId, consumeOptions } = splitConsumerOptions(rest);
  checkSource(source);
  return async function consumeOnce(message) {
    // null: the broker cancelled the consumer; there is nothing to acknowledge.
    if (message === null) return;
    const verdict = await deliveryVerdict(() => {
      const payload = parse ? parse(message) : parseJsonBody(message.content);
      const messageId = getMessageId ? getMessageId(message) : (message.properties.messageId as string | undefined);
      return handler.consume(
        { source, messageId: messageId as string, payload },
        (ctx) => process(payload, message, ctx),
        consumeOptions,
      );
    });
    try {
      if (verdict.action === "ack") channel.ack(message);
      else if (verdict.action === "reject") channel.nack(message, false, false);
      else {
        await sleep(requeueDelayMs);
        channel.nack(message, false, true);
      }
    } catch {
      // The channel closed: the broker redelivers every message it holds unacked.
    }
  };
}
