// The Standard Webhooks receiver as a Hono handler: it reads the raw body itself (`c.req.arrayBuffer()`).
import type { Context } from "hono";
import type { IdempotencyHandler } from "../handler";
import { webhookReceiver, type ProcessWebhook, type WebhookOptions } from "./webhook";

/**
 * Answers as `webhookReceiver` documents. Mount no body-parsing middleware before it that replaces the request.
 *
 * @example
 * app.post("/webhooks/acme", webhookRoute(handler, { source: "acme", secrets, onDead }, applyEvent));
 */
export function webhookRoute<T>(handler: IdempotencyHandler, options: WebhookOptions, process: ProcessWebhook<T>) {
  const receive = webhookReceiver(handler, options, process);
  return async function webhookRouteHandler(c: Context): Promise<Response> {
    const rawBody = new Uint8Array(await c.req.arrayBuffer());
    const answer = await receive({ header: (name) => c.req.header(name), rawBody });
    return c.json(answer.body as object, answer.status as 200, answer.headers ?? {});
  };
}
