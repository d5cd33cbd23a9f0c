// What a NestJS HttpException stands for, recognised by its shape (getStatus, getResponse): no import of @nestjs/common.
import { CLIENT_ANSWER } from "./declared";
import { RequestValidationError } from "./request-validation";
import { frameworkIssues } from "./issues";

type HttpExceptionShape = { name: string; message: string; getStatus(): unknown; getResponse(): unknown };

/**
 * A NestJS HttpException in the terms the classifier reads; any other value as it is. An
 * HttpException is an answer the app wrote for its client, so its status is kept (and its message
 * below 500).
 *
 * @example
 * fromHttpException(new NotFoundException("No such payment.")); // { name, message: "No such payment.", status: 404, [CLIENT_ANSWER]: true }
 */
export function fromHttpException(err: unknown): unknown {
  if (!isHttpException(err)) return err;
  const status = err.getStatus();
  const answer = err.getResponse();
  const { message, error } = (typeof answer === "object" && answer !== null ? answer : {}) as {
    message?: unknown;
    error?: unknown;
  };
  // Nest re-throws body-parser's SyntaxError as a 400 with its message, which quotes the body.
  if (status === 400 && /\bJSON\b/.test(err.message)) return { name: err.name, type: "entity.parse.failed" };
  // ValidationPipe: a 400 whose messages are the failed constraints, written by class-validator from the schema.
  if (status === 400 && Array.isArray(message) && message.every((item) => typeof item === "string")) {
    return new RequestValidationError(frameworkIssues(message.map((text) => ({ path: [], message: text }))));
  }
  // The idempotency and rate-limiter interceptors throw their `{ error: { code, message } }` answer, its status resolved.
  const answered = error as { code?: unknown; message?: unknown } | undefined;
  if (typeof answered?.code === "string")
    return { name: "AnsweredError", code: answered.code, message: answered.message, status, [CLIENT_ANSWER]: true };
  return { name: err.name, message: err.message, status, [CLIENT_ANSWER]: true };
}

function isHttpException(err: unknown): err is HttpExceptionShape {
  if (!(err instanceof Error)) return false;
  const shape = err as Partial<Record<"getStatus" | "getResponse", unknown>>;
  return typeof shape.getStatus === "function" && typeof shape.getResponse === "function";
}
