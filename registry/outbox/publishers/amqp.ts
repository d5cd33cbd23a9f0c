// The relay's publisher for RabbitMQ: persistent messages on an amqplib confirm channel, messageId = the message id.
import type { ConfirmChannel, Options } from "amqplib";
import type { OutboxMessage, Publish } from "../relay-options";

export type AmqpPublisherOptions = {
  exchange: string;
  /** @default the message's topic */
  routingKey?: ((message: OutboxMessage) => string) | undefined;
  /** More properties per message (priority, expiration...); `messageId` and `persistent` are always set. */
  publishOptions?: ((message: OutboxMessage) => Options.Publish) | undefined;
};

/**
 * Resolves when the broker confirms the message (written to its queues' disks), rejects when it
 * refuses it or when no queue is bound to take it: a confirm alone does not say a message was
 * routed, so the message goes out `mandatory` and a return fails the publish (the relay retries).
 * RabbitMQ does not dedupe: the consumer drops a second copy by `properties.messageId`.
 *
 * @example
 * const channel = await (await amqp.connect(process.env.AMQP_URL!)).createConfirmChannel();
 * const relay = startOutboxRelay({ db: pool, publish: amqpPublisher(channel, { exchange: "events" }) });
 */
export function amqpPublisher(channel: ConfirmChannel, options: AmqpPublisherOptions): Publish {
  // The broker sends basic.return before the confirm of the same message.
  const returned = new Set<string>();
  channel.on("return", (returnedMessage: { properties: { messageId?: unknown } }) => {
    const id = returnedMessage.properties.messageId;
    if (typeof id === "string") returned.add(id);
  });
  return function publishToRabbitMq(message) {
    const routingKey = options.routingKey ? options.routingKey(message) : message.topic;
    const properties: Options.Publish = {
      ...options.publishOptions?.(message),
      persistent: true,
      mandatory: true,
      messageId: message.id,
      contentType: "application/json",
      type: message.topic,
      timestamp: Math.floor(message.createdAt.getTime() / 1000),
      headers: { ...message.headers, ...(message.key === null ? {} : { "x-outbox-key": message.key }) },
    };
    return new Promise<void>((resolve, reject) => {
      // Throws at once on a closed channel; the executor turns that into the rejection.
      channel.publish(
        options.exchange,
        routingKey,
        Buffer.from(JSON.stringify(message.payload)),
        properties,
        (error: unknown) => {
          const unroutable = returned.delete(message.id);
          if (error) reject(error instanceof Error ? error : new Error(`RabbitMQ refused message ${message.id}`));
          else if (unroutable)
            reject(
              new Error(
                `RabbitMQ returned message ${message.id}: no queue is bound to exchange "${options.exchange}" for routing key "${routingKey}"`,
              ),
            );
          else resolve();
        },
      );
    });
  };
}
