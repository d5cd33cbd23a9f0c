// The relay's publisher for NATS JetStream: Nats-Msg-Id = the message id, so the stream drops a second copy within its window.
import { headers as natsHeaders, type JetStreamClient } from "nats";
import type { OutboxMessage, Publish } from "../relay-options";

export type NatsPublisherOptions = {
  /** @default the message's topic (a stream must capture it) */
  subject?: ((message: OutboxMessage) => string) | undefined;
};

const encoder = new TextEncoder();

/**
 * Resolves on the stream's acknowledgement (stored). JetStream drops a message whose id it saw within
 * the stream's `duplicate_window` (2 minutes by default): keep that window longer than the relay's
 * lease, and the consumer's inbox dedupes beyond it.
 *
 * @example
 * const nc = await connect({ servers: process.env.NATS_URL });
 * const relay = startOutboxRelay({ db: pool, publish: natsPublisher(nc.jetstream()) });
 */
export function natsPublisher(jetstream: JetStreamClient, options: NatsPublisherOptions = {}): Publish {
  return async function publishToJetStream(message) {
    const headers = natsHeaders();
    for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
    if (message.key !== null) headers.set("Outbox-Key", message.key);
    const subject = options.subject ? options.subject(message) : message.topic;
    await jetstream.publish(subject, encoder.encode(JSON.stringify(message.payload)), { msgID: message.id, headers });
  };
}
