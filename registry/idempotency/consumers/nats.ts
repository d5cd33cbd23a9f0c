// A JetStream message handler that runs each message once per `Nats-Msg-Id` header (or `getMessageId`).
import type { JsMsg } from "nats";
import { checkSource } from "../consume";
import type { IdempotencyHandler } from "../handler";
import type { OperationContext } from "../operation-context";
import { deliveryVerdict, parseJsonBody } from "./delivery";
import { splitConsumerOptions, type ConsumerOptions } from "./options";

export type NatsConsumerOptions = ConsumerOptions<JsMsg> & {
  /** How long JetStream waits before redelivering a message that should come again (nak delay). @default 1_000 */
  redeliverDelayMs?: number | undefined;
  /** The payload to fingerprint and hand on. @default the data parsed as JSON (data that is not JSON is terminated) */
  parse?: ((message: JsMsg) => unknown) | undefined;
};

/**
 * Acks a message that ran, was a duplicate, or is dead (after `onDead`); naks with a delay one
 * that should come again (keep the consumer's `max_deliver` above the handler's `maxRetries`);
 * terminates one that can never run (no `Nats-Msg-Id`, data that is not JSON, an id reused with
 * other data). Never rejects.
 *
 * @example
 * const consumer = await nc.jetstream().consumers.get("PAYMENTS", "payments-worker");
 * const handle = natsConsumer(handler, { source: "payments", onDead }, (payload, msg, ctx) => applyPayment(payload, ctx.signal));
 * for await (const msg of await consumer.consume()) await handle(msg);
 */
export function natsConsumer<T>(
  handler: IdempotencyHandler,
  options: NatsConsumerOptions,
  process: (payload: unknown, message: JsMsg, ctx: OperationContext) => Promise<T> | T,
): (message: JsMsg) => Promise<void> {
  const { redeliverDelayMs = 1_000, parse, ...rest } = options;
  const { source, getMessageId, consumeOptions } = splitConsumerOptions(rest);
  checkSource(source);
  return async function consumeOnce(message) {
    const verdict = await deliveryVerdict(() => {
      const payload = parse ? parse(message) : parseJsonBody(message.data);
      const messageId = getMessageId ? getMessageId(message) : message.headers?.get("Nats-Msg-Id");
      return handler.consume(
        { source, messageId: messageId as string, payload },
        (ctx) => process(payload, message, ctx),
        consumeOptions,
      );
    });
    if (verdict.action === "ack") message.ack();
    // No reason string: servers before 2.10.4 do not take one, and the message stayed pending.
    else if (verdict.action === "reject") message.term();
    else message.nak(redeliverDelayMs);
  };
}
