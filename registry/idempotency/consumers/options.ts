// What every consumer adapter takes: the handler's consume options, the source, and how to read a delivery's id.
import type { ConsumeOptions } from "../consume";
import type { ExecuteOptions } from "../handler";

/**
 * `source` names the queue or sender (it scopes the ids: two sources never share one); the rest
 * (`onDead`, `isPermanentError`, `waitMs`...) goes to `handler.consume` unchanged.
 */
export type ConsumerOptions<Delivery> = ConsumeOptions<ExecuteOptions> & {
  source: string;
  /** The id the delivery is deduplicated on. @default the broker's own message id (see each adapter) */
  getMessageId?: ((delivery: Delivery) => string | undefined) | undefined;
};

/** Splits the adapter's own options from what goes to `consume`. */
export function splitConsumerOptions<Delivery>({ source, getMessageId, ...consumeOptions }: ConsumerOptions<Delivery>) {
  return { source, getMessageId, consumeOptions };
}
