// The Standard Webhooks receiver as a Fastify route, in a scope of its own whose JSON parser keeps the raw bytes.
import type { FastifyInstance } from "fastify";
import type { IdempotencyHandler } from "../handler";
import { webhookReceiver, type ProcessWebhook, type WebhookOptions } from "./webhook";

/**
 * Registers `POST path` in an encapsulated scope whose content-type parser hands the body over as
 * a Buffer (the bytes that were signed), leaving the app's own JSON parsing untouched.
 *
 * @example
 * await app.register(webhookRoutes("/webhooks/acme", handler, { source: "acme", secrets, onDead }, applyEvent));
 */
export function webhookRoutes<T>(
  path: string,
  handler: IdempotencyHandler,
  options: WebhookOptions,
  process: ProcessWebhook<T>,
) {
  const receive = webhookReceiver(handler, options, process);
  return function webhookScope(scope: FastifyInstance, _options: unknown, done: (err?: Error) => void): void {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    scope.post(path, async function webhookRouteHandler(request, reply) {
      const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const answer = await receive({ header: (name) => headerValue(request.headers[name]), rawBody });
      return reply
        .status(answer.status)
        .headers(answer.headers ?? {})
        .send(answer.body);
    });
    done();
  };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(" ") : value;
}
