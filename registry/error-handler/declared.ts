// Errors that declare themselves an answer for this client, recognised by shape (no framework import).
import { isErrorStatus } from "./status-table";

/** The status such an error answers with, and whether its message is written for the client. */
export type DeclaredStatus = { status: number; exposeMessage: boolean };

/**
 * Marks an error whose `status` and message are an answer for the client, as this block's own
 * problems are; `Symbol.for`, so two vendored copies of the block agree.
 */
export const CLIENT_ANSWER: unique symbol = Symbol.for("blocks.error-handler.client-answer");

/**
 * The status an error declares for the client, or `undefined` for any other error (a plain
 * `status` property is not a declaration: HTTP clients put the downstream's status there).
 * In order: this block's own mark, http-errors (`expose`; Express's body parsers, Koa's
 * `ctx.throw`, @fastify/sensible), Hono's `HTTPException`, and Fastify's own errors (`FST_*`).
 *
 * @example
 * declaredStatus(createError(404, "No such payment.")); // { status: 404, exposeMessage: true }
 * declaredStatus(Object.assign(new Error("Unauthorized"), { status: 401 })); // undefined
 */
export function declaredStatus(err: unknown): DeclaredStatus | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const shape = err as Record<PropertyKey, unknown>;
  const status = isErrorStatus(shape.status)
    ? shape.status
    : isErrorStatus(shape.statusCode)
      ? shape.statusCode
      : undefined;
  if (status === undefined) return undefined;
  if (shape[CLIENT_ANSWER] === true) return { status, exposeMessage: status < 500 };
  // http-errors sets `expose` on every error it makes: true below 500 unless you said otherwise.
  if (typeof shape.expose === "boolean") return { status, exposeMessage: shape.expose && status < 500 };
  // Hono's HTTPException: a status, and the Response it may carry, behind getResponse().
  if (typeof shape.getResponse === "function" && typeof shape.getStatus !== "function" && shape.status === status)
    return { status, exposeMessage: status < 500 };
  // @fastify/error: Fastify and its plugins name every code FST_*, with the status in statusCode.
  if (typeof shape.code === "string" && shape.code.startsWith("FST_") && shape.statusCode === status)
    return { status, exposeMessage: status < 500 };
  return undefined;
}
