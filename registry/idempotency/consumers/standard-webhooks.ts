// Standard Webhooks verification: HMAC-SHA256 over `id.timestamp.body`, constant-time, with a tolerance and rotated secrets.
import { createHmac, timingSafeEqual } from "node:crypto";

/** Five minutes either way, as the specification recommends: wider lets a captured delivery be replayed for longer. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookSignatureHeaders = {
  id: string | null | undefined;
  timestamp: string | null | undefined;
  signature: string | null | undefined;
};

/** Why a delivery was refused (401): the message names it, the sender's body never shows anything else. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  readonly code = "WEBHOOK_SIGNATURE_INVALID";
}

const SECRET_PREFIX = "whsec_";
const TIMESTAMP = /^[0-9]{1,12}$/;

/**
 * Decodes signing secrets once (`whsec_` + base64, as senders show them; the prefix is optional).
 * Several secrets: during a rotation a delivery signed with either is accepted.
 */
export function signingKeys(secrets: string | readonly string[]): Buffer[] {
  const list = typeof secrets === "string" ? [secrets] : secrets;
  if (list.length === 0) throw new TypeError("idempotency: a webhook receiver needs at least one signing secret.");
  return list.map((secret) => {
    const encoded =
      typeof secret === "string" && secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
    const key =
      typeof encoded === "string" && /^[A-Za-z0-9+/]+={0,2}$/.test(encoded)
        ? Buffer.from(encoded, "base64")
        : Buffer.alloc(0);
    if (key.length === 0)
      throw new TypeError(
        "idempotency: a webhook signing secret must be `whsec_` followed by base64 (as the sender shows it).",
      );
    return key;
  });
}

/**
 * Throws WebhookVerificationError unless one of the delivery's `v1,<base64>` signatures (space
 * separated) is the HMAC-SHA256, under one of `keys`, of `<id>.<timestamp>.<raw body>`, and the
 * timestamp is within `toleranceSeconds` of now, in the past or the future.
 *
 * @example
 * verifyStandardWebhook({ id, timestamp, signature }, rawBody, signingKeys(process.env.WEBHOOK_SECRET!));
 */
export function verifyStandardWebhook(
  headers: WebhookSignatureHeaders,
  body: string | Uint8Array,
  keys: readonly Buffer[],
  { toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, nowSeconds = Math.floor(Date.now() / 1000) } = {},
): void {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature)
    throw new WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature header.");
  if (!TIMESTAMP.test(timestamp))
    throw new WebhookVerificationError("The webhook-timestamp header is not a number of seconds.");
  const age = nowSeconds - Number(timestamp);
  if (age > toleranceSeconds) throw new WebhookVerificationError("The webhook-timestamp is too old.");
  if (age < -toleranceSeconds) throw new WebhookVerificationError("The webhook-timestamp is in the future.");
  const signed = Buffer.concat([
    Buffer.from(`${id}.${timestamp}.`),
    typeof body === "string" ? Buffer.from(body) : body,
  ]);
  const candidates = signature
    .split(" ")
    .filter((entry) => entry.startsWith("v1,"))
    .map((entry) => Buffer.from(entry.slice(3), "base64"));
  for (const key of keys) {
    const expected = createHmac("sha256", key).update(signed).digest();
    // timingSafeEqual needs equal lengths; a length says nothing about the expected bytes.
    if (candidates.some((candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected)))
      return;
  }
  throw new WebhookVerificationError("No webhook-signature matches the body under the configured secrets.");
}
