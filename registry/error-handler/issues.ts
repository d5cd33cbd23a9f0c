// Validation issues as they may reach a client: where (a path and its JSON Pointer) and what kind, never the rejected value.

/** One problem with the request, in the problem body's `issues`. */
export type ProblemIssue = {
  /** Where in the input, e.g. `["items", 0, "amount"]`; `[]` for the input as a whole. */
  path: (string | number)[];
  /** The same place as an RFC 6901 JSON Pointer: `"/items/0/amount"`, `""` for the whole input. */
  pointer: string;
  /** Built from the kind of issue and what the schema expected; never from the input. */
  message: string;
  /** The validator's own kind of issue: zod's `code`, valibot's `type`, arktype's `code`, Ajv's `keyword`. */
  code?: string;
};

/** A Standard Schema issue (zod, valibot, arktype), with the fields those validators add that this block reads. */
export type SchemaIssue = {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
};

// A bad request with ten thousand issues must not become a ten-megabyte answer.
export const MAX_ISSUES = 50;
const MAX_TEXT_LENGTH = 120;

/**
 * The client's view of Standard Schema issues. The validators' own messages are not used: valibot's
 * ("...but received \"4242 4242 4242 4242\"") and arktype's ("(was ...)") quote the rejected value.
 * The message says what the schema expected, when the validator says it apart from the input.
 *
 * @example
 * schemaIssues(result.issues); // [{ path: ["amount"], pointer: "/amount", message: "Expected number.", code: "invalid_type" }]
 */
export function schemaIssues(issues: readonly SchemaIssue[]): ProblemIssue[] {
  return issues.slice(0, MAX_ISSUES).map((issue) => {
    const fields = issue as SchemaIssue & Record<string, unknown>;
    const path = (issue.path ?? []).map(pathSegment);
    const code = [fields.code, fields.type].find((value) => typeof value === "string");
    const expected = expectedOf(fields);
    return withCode(
      {
        path,
        pointer: jsonPointer(path),
        message: expected === undefined ? "Invalid value." : `Expected ${expected}.`,
      },
      code,
    );
  });
}

/**
 * Issues whose messages a framework's own validator wrote from the schema alone: Ajv's (Fastify),
 * class-validator's (NestJS's ValidationPipe). Kept as written, clipped.
 */
export function frameworkIssues(
  issues: readonly { path: (string | number)[]; message: string; code?: string | undefined }[],
): ProblemIssue[] {
  return issues
    .slice(0, MAX_ISSUES)
    .map(({ path, message, code }) => withCode({ path, pointer: jsonPointer(path), message: clip(message) }, code));
}

/**
 * RFC 6901: each segment prefixed with "/", "~" written "~0" and "/" written "~1".
 *
 * @example
 * jsonPointer(["a/b", 0]); // "/a~1b/0"
 */
export function jsonPointer(path: readonly (string | number)[]): string {
  return path.map((segment) => `/${String(segment).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

/** Ajv's instancePath, a JSON Pointer, back to segments. */
export function pointerPath(pointer: string): string[] {
  return pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/**
 * What the schema expected, from the fields zod, valibot and arktype fill from the schema; dropped
 * when it holds the validator's description of the input (arktype's union: 'must be "EUR" or "USD" (was "XYZ")').
 */
function expectedOf(fields: Record<string, unknown>): string | undefined {
  const { expected, values, minimum, maximum, format, origin } = fields;
  // zod's bounds: of a string's length, an array's size, or a number.
  const unit = origin === "string" ? " characters" : origin === "array" || origin === "set" ? " items" : "";
  let text: string | undefined;
  if (typeof expected === "string") text = expected;
  else if (Array.isArray(values)) text = `one of ${values.map((value) => JSON.stringify(value)).join(", ")}`;
  else if (typeof minimum === "number" || typeof minimum === "bigint") text = `at least ${minimum}${unit}`;
  else if (typeof maximum === "number" || typeof maximum === "bigint") text = `at most ${maximum}${unit}`;
  else if (typeof format === "string") text = `a valid ${format}`;
  if (text === undefined || text.length > MAX_TEXT_LENGTH || /\(was\b/.test(text)) return undefined;
  const seen = [fields.received, fields.actual, fields.input, fields.data].filter(
    (value): value is string => typeof value === "string" && value.length >= 3,
  );
  return seen.some((value) => text.includes(value)) ? undefined : text;
}

/** Standard Schema path segments: keys, or `{ key }` objects (valibot). */
function pathSegment(segment: PropertyKey | { readonly key: PropertyKey }): string | number {
  const key = typeof segment === "object" && segment !== null ? segment.key : segment;
  if (typeof key === "number") return key;
  return typeof key === "symbol" ? (key.description ?? "") : key;
}

function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function withCode(issue: ProblemIssue, code: unknown): ProblemIssue {
  return typeof code === "string" ? { ...issue, code } : issue;
}
