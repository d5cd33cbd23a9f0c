// The Standard Webhooks receiver as an Express route: mount it after `express.raw`, so the body is the bytes that were signed.
import type { Request, Response } from "express";
import type { IdempotencyHandler } from "../handler";
import { webhookReceiver, type ProcessWebhook, type WebhookOptions } from "./webhook";

/**
 * The body must reach it unparsed (a Buffer): `express.json()` before it would re-serialise and
 * break every signature. Answers as `webhookReceiver` documents.
 *
 * @example
 * app.post("/webhooks/acme", express.raw({ type: "*\/*" }), webhookRoute(handler, { source: "acme", secrets, onDead }, applyEvent));
 */
export function webhookRoute<T>(handler: IdempotencyHandler, options: WebhookOptions, process: ProcessWebhook<T>) {
  const receive = webhookReceiver(handler, options, process);
  return async function webhookRouteHandler(req: Request, res: Response): Promise<void> {
    const body: unknown = req.body;
    if (body !== undefined && !Buffer.isBuffer(body)) {
      throw new TypeError(
        'idempotency: the webhook route got a parsed body; mount `express.raw({ type: "*/*" })` before it, and no JSON parser.',
      );
    }
    const answer = await receive({ header: (name) => req.get(name), rawBody: body ?? Buffer.alloc(0) });
    res
      .status(answer.status)
      .set(answer.headers ?? {})
      .json(answer.body);
  };
}
