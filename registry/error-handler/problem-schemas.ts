// OpenAPI 3.1 component schemas (JSON Schema 2020-12) for every problem the app can answer.
import type { ProblemDefinition } from "./define-problem";
import { BLOCK_STATUSES, DEFAULT_STATUSES, statusTitle, type StatusTable } from "./status-table";

/** A JSON Schema object, as OpenAPI 3.1 `components.schemas` holds them. */
export type JsonSchema = { readonly [keyword: string]: unknown };

export type ProblemSchemasOptions = {
  /** The handler's `statuses`. */
  statuses?: StatusTable | undefined;
  /** The handler's `problems`. */
  problems?: readonly ProblemDefinition[] | undefined;
  /** The handler's `typeOf`. */
  typeOf?: ((code: string) => string) | undefined;
};

const REF = "#/components/schemas/";

const ISSUE: JsonSchema = {
  type: "object",
  required: ["path", "pointer", "message"],
  properties: {
    path: {
      type: "array",
      items: { type: ["string", "integer"] },
      description: "Where in the input; [] for the input as a whole.",
    },
    pointer: { type: "string", description: "The same place as an RFC 6901 JSON Pointer." },
    message: { type: "string", description: "What the schema expected; never the rejected value." },
    code: { type: "string", description: "The validator's kind of issue." },
  },
};

const PROBLEM: JsonSchema = {
  type: "object",
  description: "An RFC 9457 problem detail (application/problem+json).",
  required: ["type", "title", "status", "detail", "code", "requestId"],
  properties: {
    type: { type: "string", format: "uri-reference", default: "about:blank" },
    title: { type: "string" },
    status: { type: "integer", minimum: 400, maximum: 599 },
    detail: { type: "string" },
    instance: { type: "string", format: "uri-reference", description: "The request's path, without its query." },
    code: { type: "string", description: "Stable and machine-readable: what clients switch on." },
    requestId: { type: "string", description: "Quote it when you report the problem; the server's log has it." },
    traceId: { type: "string", pattern: "^[0-9a-f]{32}$", description: "The W3C trace id of the request." },
    issues: { type: "array", items: { $ref: `${REF}ProblemIssue` } },
  },
  additionalProperties: true,
};

/**
 * `Problem` (the body every error response has), `ProblemIssue`, and one schema per code the app
 * answers with: this block's, the other blocks', your `statuses` and your defined problems, named
 * `<Code>Problem` (`CardDeclinedProblem`). Pass the handler's own options, so the two agree.
 * A status-derived code (`FORBIDDEN` from an http-errors 403) has no schema of its own: `Problem`
 * describes it.
 *
 * @example
 * const openapi = { openapi: "3.1.0", components: { schemas: { ...problemSchemas(options) } } };
 * // responses: { 402: { content: { "application/problem+json": { schema: { $ref: "#/components/schemas/CardDeclinedProblem" } } } } }
 */
export function problemSchemas(options: ProblemSchemasOptions = {}): Record<string, JsonSchema> {
  const definitions = new Map((options.problems ?? []).map((problem) => [problem.code, problem]));
  const statuses: StatusTable = {
    ...DEFAULT_STATUSES,
    ...Object.fromEntries([...definitions.values()].map(({ code, status }) => [code, status])),
    ...options.statuses,
  };
  const typeOf = options.typeOf ?? (() => "about:blank");
  const schemas: Record<string, JsonSchema> = { Problem: PROBLEM, ProblemIssue: ISSUE };
  for (const [code, status] of Object.entries(statuses)) {
    const definition = definitions.get(code);
    const title = definition?.title ?? statusTitle(status);
    // A route's statusMap can change a block's status, and `localize` any title: those are examples, not constants.
    const statusSchema =
      Object.hasOwn(BLOCK_STATUSES, code) && options.statuses?.[code] === undefined
        ? { examples: [status] }
        : { const: status };
    const constants = {
      code: { const: code },
      status: statusSchema,
      title: { type: "string", examples: [title] },
      type: { const: definition?.type ?? typeOf(code) },
    };
    const required = code === "VALIDATION_FAILED" ? { required: ["issues"] } : {};
    schemas[schemaName(code)] = {
      description: title,
      allOf: [{ $ref: `${REF}Problem` }, { type: "object", properties: constants, ...required }],
    };
  }
  return schemas;
}

/**
 * The component name of a code's schema.
 *
 * @example
 * schemaName("CARD_DECLINED"); // "CardDeclinedProblem"
 */
export function schemaName(code: string): string {
  const words = code
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return `${words.map((word) => word[0]?.toUpperCase() + word.slice(1)).join("")}Problem`;
}
