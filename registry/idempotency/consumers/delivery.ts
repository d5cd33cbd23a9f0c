// What a consumer adapter does with a delivery, from what `consume` answered: the one rule every adapter translates.
import type { ConsumeResult } from "../consume";
import { IdempotencyError, isIdempotencyError } from "../errors";

/**
 * `ack`: done (processed, a duplicate, or dead after `onDead`). `reject`: no delivery of it can
 * ever run (no usable id, a payload the fingerprint cannot take, or its id reused with another
 * payload): drop it without redelivery, to the broker's dead-letter place if it has one.
 * `retry`: it should come again (the operation's transient error, a duplicate still in progress,
 * the store unavailable).
 */
export type DeliveryVerdict =
  | { action: "ack"; result: ConsumeResult<unknown> }
  | { action: "reject"; error: unknown }
  | { action: "retry"; error: unknown };

const REFUSALS = new Set([
  "IDEMPOTENCY_KEY_INVALID",
  "IDEMPOTENCY_PAYLOAD_INVALID",
  "KEY_REUSED_WITH_DIFFERENT_REQUEST",
]);

/** True for an error `consume` rejects with when redelivering the message can never help. */
export function isRefusedDelivery(err: unknown): boolean {
  return isIdempotencyError(err) && REFUSALS.has(err.code);
}

/**
 * Settles one `consume` call into what the adapter must tell its broker.
 *
 * @example
 * const verdict = await deliveryVerdict(() => handler.consume(message, fn, options));
 * if (verdict.action === "ack") msg.ack();
 */
export async function deliveryVerdict(consume: () => Promise<ConsumeResult<unknown>>): Promise<DeliveryVerdict> {
  try {
    return { action: "ack", result: await consume() };
  } catch (error) {
    return isRefusedDelivery(error) ? { action: "reject", error } : { action: "retry", error };
  }
}

/** The message a broker's body holds: JSON, or a refusal (`IDEMPOTENCY_PAYLOAD_INVALID`) when it is not. */
export function parseJsonBody(body: Uint8Array | string): unknown {
  const text =
    typeof body === "string" ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new IdempotencyError(
      "IDEMPOTENCY_PAYLOAD_INVALID",
      "The message body is not JSON, so it cannot be fingerprinted; it was not run.",
      { cause },
    );
  }
}
