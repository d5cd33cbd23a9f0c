// A Standard Webhooks receiver: verified, then run once per `webhook-id`; the fetch-standard handler, and the core the framework routes share.
import { checkSource } from "../consume";
import { idempotencyErrorStatus, isIdempotencyError } from "../errors";
import type { IdempotencyHandler } from "../handler";
import type { OperationContext } from "../operation-context";
import { deliveryVerdict, parseJsonBody } from "./delivery";
import { splitConsumerOptions, type ConsumerOptions } from "./options";
import { signingKeys, verifyStandardWebhook, WebhookVerificationError } from "./standard-webhooks";

export type WebhookOptions = Omit<ConsumerOptions<never>, "getMessageId"> & {
  /** The sender's signing secret(s), `whsec_...`; during a rotation list the new and the old. */
  secrets: string | readonly string[];
  /** @default 300 (five minutes, either way) */
  toleranceSeconds?: number | undefined;
};

export type ProcessWebhook<T> = (event: unknown, ctx: OperationContext) => Promise<T> | T;

/** What a framework route hands the receiver: a header reader and the body exactly as it arrived. */
export type WebhookDelivery = { header: (name: string) => string | null | undefined; rawBody: string | Uint8Array };
export type WebhookAnswer = { status: number; body: unknown; headers?: Record<string, string> };

/**
 * The answers, decided once for every framework: 200 for a delivery that ran, a duplicate and a
 * dead one (after `onDead`: the sender stops, retrying cannot help); 401 for an unsigned, badly
 * signed, stale or future one (nothing runs); 400 for a signed one that is not JSON or whose id is
 * malformed; 409 for an id sent again with another body (a conflict, logged and counted) and for
 * one still running (with Retry-After); 503 when the store is down; 500, without internals, for
 * the operation's transient failure, so the sender retries.
 */
export function webhookReceiver<T>(handler: IdempotencyHandler, options: WebhookOptions, process: ProcessWebhook<T>) {
  const { secrets, toleranceSeconds, ...rest } = options;
  const keys = signingKeys(secrets);
  const { source, consumeOptions } = splitConsumerOptions(rest);
  checkSource(source);
  return async function receiveWebhook({ header, rawBody }: WebhookDelivery): Promise<WebhookAnswer> {
    const id = header("webhook-id");
    try {
      verifyStandardWebhook(
        { id, timestamp: header("webhook-timestamp"), signature: header("webhook-signature") },
        rawBody,
        keys,
        { toleranceSeconds },
      );
    } catch (err) {
      if (err instanceof WebhookVerificationError)
        return { status: 401, body: { error: { code: err.code, message: err.message } } };
      throw err;
    }
    const verdict = await deliveryVerdict(() => {
      const event = parseJsonBody(rawBody);
      return handler.consume(
        { source, messageId: id as string, payload: event },
        (ctx) => process(event, ctx),
        consumeOptions,
      );
    });
    if (verdict.action === "ack") return { status: 200, body: { outcome: verdict.result.outcome } };
    const err = verdict.error;
    if (!isIdempotencyError(err))
      return {
        status: 500,
        body: { error: { code: "WEBHOOK_FAILED", message: "The webhook could not be processed; send it again." } },
      };
    const retryAfter =
      err.retryAfterSeconds === undefined ? undefined : { "retry-after": String(err.retryAfterSeconds) };
    return { status: idempotencyErrorStatus(err), body: err.toJSON(), ...(retryAfter && { headers: retryAfter }) };
  };
}

/**
 * A fetch-standard handler (Next.js route handlers, Bun, Deno, Cloudflare Workers, Hono's
 * `app.post(path, (c) => handle(c.req.raw))`): reads the raw body itself.
 *
 * @example
 * export const POST = webhookHandler(handler, { source: "acme", secrets: [process.env.ACME_WEBHOOK_SECRET!], onDead },
 *   async (event, ctx) => applyEvent(event, ctx.signal));
 */
export function webhookHandler<T>(
  handler: IdempotencyHandler,
  options: WebhookOptions,
  process: ProcessWebhook<T>,
): (request: Request) => Promise<Response> {
  const receive = webhookReceiver(handler, options, process);
  return async function handleWebhook(request) {
    const rawBody = new Uint8Array(await request.arrayBuffer());
    const answer = await receive({ header: (name) => request.headers.get(name), rawBody });
    return Response.json(answer.body, { status: answer.status, headers: answer.headers ?? {} });
  };
}
