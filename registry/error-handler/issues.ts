// Validation issues as they may reach a client: where and what, never the rejected value itself.

/** One problem with the request, in the problem body's `issues`. */
export type ProblemIssue = {
  /** Where in the input, e.g. `["items", 0, "amount"]`; `[]` for the input as a whole. */
  path: (string | number)[];
  message: string;
  /** The validator's own kind of issue: zod's `code`, valibot's `type`, Ajv's `keyword`. */
  code?: string;
};

// A bad request with ten thousand issues must not become a ten-megabyte answer.
const MAX_ISSUES = 50;
const MAX_MESSAGE_LENGTH = 300;

/**
 * The issues of a validation error, or `undefined` when it has none: `issues` (zod, valibot,
 * Standard Schema) or `validation` (Fastify's Ajv errors). Only path, message and kind survive:
 * `input`, `received` and Ajv's `params` can hold the submitted value, a password as often as not.
 *
 * @example
 * validationIssues(zodError); // [{ path: ["amount"], message: "Expected number, received string", code: "invalid_type" }]
 */
export function validationIssues(err: unknown): ProblemIssue[] | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const { issues, validation } = err as { issues?: unknown; validation?: unknown };
  if (Array.isArray(issues)) return issues.slice(0, MAX_ISSUES).map((issue) => fromSchemaIssue(issue));
  if (Array.isArray(validation)) return validation.slice(0, MAX_ISSUES).map((issue) => fromAjvError(issue));
  return undefined;
}

type SchemaIssue = { path?: unknown; message?: unknown; code?: unknown; type?: unknown };

function fromSchemaIssue(issue: unknown): ProblemIssue {
  const { path, message, code, type } = (issue ?? {}) as SchemaIssue;
  const segments = Array.isArray(path) ? path.map(pathSegment) : [];
  return withCode({ path: segments, message: clip(message) }, code ?? type);
}

type AjvError = { instancePath?: unknown; message?: unknown; keyword?: unknown };

function fromAjvError(error: unknown): ProblemIssue {
  const { instancePath, message, keyword } = (error ?? {}) as AjvError;
  // A JSON Pointer: "/items/0/amount", with "~1" for "/" and "~0" for "~" inside names.
  const segments =
    typeof instancePath === "string" && instancePath !== ""
      ? instancePath
          .slice(1)
          .split("/")
          .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
      : [];
  return withCode({ path: segments, message: clip(message) }, keyword);
}

/** zod paths hold keys; valibot's hold `{ key }` objects. */
function pathSegment(segment: unknown): string | number {
  const key = typeof segment === "object" && segment !== null ? (segment as { key?: unknown }).key : segment;
  return typeof key === "number" ? key : String(key);
}

function clip(message: unknown): string {
  const text = typeof message === "string" ? message : "Invalid value.";
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH)}…` : text;
}

function withCode(issue: ProblemIssue, code: unknown): ProblemIssue {
  return typeof code === "string" ? { ...issue, code } : issue;
}
