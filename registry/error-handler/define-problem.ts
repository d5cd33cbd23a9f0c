// Typed problem definitions: one place for a problem's code, status, title and type, and the error that answers with it.
import { CLIENT_ANSWER } from "./declared";
import { isErrorStatus } from "./status-table";

/** What a problem is, the same for every occurrence (RFC 9457 §3.1). */
export type ProblemSpec<Code extends string = string> = {
  /** Stable, machine-readable: what clients switch on, e.g. "CARD_DECLINED". */
  code: Code;
  status: number;
  /** A short summary that does not change from occurrence to occurrence. */
  title: string;
  /** A URI identifying the problem type, ideally a page of your API docs. @default "about:blank" */
  type?: string | undefined;
};

/** A problem with its defaults filled in. */
export type ResolvedProblem<Code extends string = string> = {
  readonly code: Code;
  readonly status: number;
  readonly title: string;
  readonly type: string;
};

/** Extension members an occurrence may add (RFC 9457 §3.2); the standard members cannot be replaced. */
export type ProblemExtensions = Record<string, string | number | boolean | null>;

// Members the handler fills itself: an extension by these names would contradict them.
const RESERVED = new Set(["type", "title", "status", "detail", "instance", "code", "requestId", "traceId", "issues"]);

const DEFINED_PROBLEM: unique symbol = Symbol.for("blocks.error-handler.defined-problem");

/** The error a defined problem is thrown as. Its message is the `detail` the client reads (below 500). */
export class ProblemError<Code extends string = string> extends Error {
  declare readonly name: "ProblemError";
  declare readonly code: Code;
  declare readonly status: number;
  declare readonly title: string;
  declare readonly type: string;
  declare readonly extensions: ProblemExtensions;
  declare readonly [CLIENT_ANSWER]: true;
  declare readonly [DEFINED_PROBLEM]: true;

  // Assigned, not declared as class fields: a field is defined on each error before the constructor
  // writes it, twice the work for every problem a route throws.
  constructor(
    spec: ResolvedProblem<Code>,
    detail: string,
    extensions: ProblemExtensions,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.code = spec.code;
    this.status = spec.status;
    this.title = spec.title;
    this.type = spec.type;
    this.extensions = extensions;
  }
}

// On the prototype, not each error: a route that answers with a problem pays only for what differs.
Object.defineProperties(ProblemError.prototype, {
  name: { value: "ProblemError", writable: true, configurable: true },
  [CLIENT_ANSWER]: { value: true },
  [DEFINED_PROBLEM]: { value: true },
});

export type ProblemDefinition<Code extends string = string> = ResolvedProblem<Code> & {
  /** The error to throw; `detail` defaults to the title. */
  create(detail?: string, extensions?: ProblemExtensions, options?: { cause?: unknown }): ProblemError<Code>;
  /** True for this problem's errors, from any copy of this module. */
  is(err: unknown): err is ProblemError<Code>;
};

/**
 * Defines a problem once; pass the definitions to the handler (`problems`) so its code maps,
 * and so `problemSchemas()` documents it.
 *
 * @example
 * export const CardDeclined = defineProblem({ code: "CARD_DECLINED", status: 402, title: "Card declined", type: "https://docs.example.com/problems/card-declined" });
 * throw CardDeclined.create("The issuer declined the card.", { declineCode: "insufficient_funds" });
 */
export function defineProblem<const Code extends string>(spec: ProblemSpec<Code>): ProblemDefinition<Code> {
  if (!/^[A-Z][A-Z0-9_]*$/.test(spec.code))
    throw new TypeError(`defineProblem: code must be UPPER_SNAKE_CASE, not ${JSON.stringify(spec.code)}.`);
  if (!isErrorStatus(spec.status))
    throw new TypeError(
      `defineProblem: the status of ${spec.code} must be an integer from 400 to 599, not ${String(spec.status)}.`,
    );
  if (spec.title.trim() === "") throw new TypeError(`defineProblem: ${spec.code} needs a title.`);
  const resolved = Object.freeze({
    code: spec.code,
    status: spec.status,
    title: spec.title,
    type: spec.type ?? "about:blank",
  });
  return Object.freeze({
    ...resolved,
    // The rest parameter: the usual throw passes the detail alone, and a call with fewer arguments than
    // declared parameters makes the error's stack trace (taken at every throw) dearer to capture.
    create(detail?: string, ...[extensions, options]: [ProblemExtensions?, { cause?: unknown }?]): ProblemError<Code> {
      // The usual throw names no extension: nothing to check, and no list made to check it.
      if (extensions !== undefined) {
        const reserved = Object.keys(extensions).filter((name) => RESERVED.has(name));
        if (reserved.length > 0)
          throw new TypeError(
            `${spec.code}: ${reserved.join(", ")} cannot be an extension member; the handler sets it.`,
          );
      }
      // `new ProblemError(...)`, the same object (prototype, own members in the same order, the stack
      // from this frame down), made as an Error given ProblemError's prototype: V8 takes a stack trace
      // for an Error subclass's constructor at a sixth more of the cost, and every throw takes one.
      // Here, not in a helper: the stack starts at the frame that makes the Error.
      const err = Object.setPrototypeOf(new Error(detail ?? resolved.title, options), ProblemError.prototype) as {
        -readonly [Member in keyof ResolvedProblem<Code> | "extensions"]: ProblemError<Code>[Member];
      };
      err.code = resolved.code;
      err.status = resolved.status;
      err.title = resolved.title;
      err.type = resolved.type;
      err.extensions = extensions ?? {};
      return err as ProblemError<Code>;
    },
    is(err: unknown): err is ProblemError<Code> {
      return isProblemError(err) && err.code === resolved.code;
    },
  });
}

/** True for a ProblemError from any copy of this module. */
export function isProblemError(err: unknown): err is ProblemError {
  return typeof err === "object" && err !== null && (err as { [DEFINED_PROBLEM]?: unknown })[DEFINED_PROBLEM] === true;
}
