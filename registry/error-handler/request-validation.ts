// The one mark of a validation error about the request: issues reach the client only through it.
import { frameworkIssues, pointerPath, schemaIssues, type ProblemIssue, type SchemaIssue } from "./issues";

const REQUEST_VALIDATION: unique symbol = Symbol.for("blocks.error-handler.request-validation");

/**
 * The request did not pass its schema. Only this error (any copy of it: the mark is a
 * `Symbol.for`) becomes `VALIDATION_FAILED` with issues: a ZodError from parsing a payment
 * provider's answer is an internal error (500), however many `issues` it has.
 */
export class RequestValidationError extends Error {
  override readonly name = "RequestValidationError";
  readonly code = "VALIDATION_FAILED";
  /** Already safe to send: paths, pointers and messages without the rejected values. */
  readonly problemIssues: ProblemIssue[];
  readonly [REQUEST_VALIDATION] = true;

  constructor(issues: ProblemIssue[]) {
    super("The request is not valid.");
    this.problemIssues = issues;
  }
}

/**
 * Marks the issues of *request* validation as the client's to see: Standard Schema issues (zod,
 * valibot, arktype, e.g. `error.issues` of a failed `safeParse` of `req.body`).
 *
 * @example
 * const parsed = PaymentBody.safeParse(req.body);
 * if (!parsed.success) throw requestValidationError(parsed.error.issues);
 */
export function requestValidationError(issues: readonly SchemaIssue[]): RequestValidationError {
  return new RequestValidationError(schemaIssues(issues));
}

/** A Standard Schema (v1): what zod 3.24+, valibot 1 and arktype 2 expose as `~standard`. */
export type StandardSchema<Output = unknown> = {
  readonly "~standard": {
    readonly version: 1;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
  };
};
type StandardResult<Output> =
  { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly SchemaIssue[] };

/**
 * Validates part of a request with any Standard Schema; throws a RequestValidationError when it
 * does not pass.
 *
 * @example
 * const body = await parseRequest(PaymentBody, req.body); // zod, valibot or arktype
 */
export async function parseRequest<Output>(schema: StandardSchema<Output>, value: unknown): Promise<Output> {
  const result = await schema["~standard"].validate(value);
  if (result.issues) throw requestValidationError(result.issues);
  return result.value;
}

/**
 * The issues of a request validation error, else `undefined`: this block's mark, and the
 * frameworks' own request validators: Fastify's schema validation (`FST_ERR_VALIDATION`, Ajv's
 * errors, whose messages come from the schema).
 */
export function requestIssues(err: unknown): ProblemIssue[] | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const shape = err as {
    [REQUEST_VALIDATION]?: unknown;
    problemIssues?: unknown;
    code?: unknown;
    validation?: unknown;
  };
  if (shape[REQUEST_VALIDATION] === true && Array.isArray(shape.problemIssues))
    return shape.problemIssues as ProblemIssue[];
  if (shape.code === "FST_ERR_VALIDATION" && Array.isArray(shape.validation))
    return frameworkIssues(shape.validation.map(fromAjvError));
  return undefined;
}

function fromAjvError(error: unknown): { path: string[]; message: string; code?: string } {
  const { instancePath, message, keyword } = (error ?? {}) as {
    instancePath?: unknown;
    message?: unknown;
    keyword?: unknown;
  };
  const path = typeof instancePath === "string" ? pointerPath(instancePath) : [];
  return {
    path,
    message: typeof message === "string" ? message : "Invalid value.",
    ...(typeof keyword === "string" ? { code: keyword } : {}),
  };
}
