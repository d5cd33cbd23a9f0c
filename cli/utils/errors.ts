// Every failure the CLI reports, as a stable code with a message, a cause and a suggestion.

export const ErrorCode = {
  MISSING_PACKAGE_JSON: "MISSING_PACKAGE_JSON",
  MISSING_CONFIG: "MISSING_CONFIG",
  INVALID_CONFIG: "INVALID_CONFIG",
  UNKNOWN_BLOCK: "UNKNOWN_BLOCK",
  UNKNOWN_FRAMEWORK: "UNKNOWN_FRAMEWORK",
  INVALID_REGISTRY: "INVALID_REGISTRY",
  UNKNOWN_REGISTRY: "UNKNOWN_REGISTRY",
  REGISTRY_FETCH_FAILED: "REGISTRY_FETCH_FAILED",
  MISSING_ENV_VAR: "MISSING_ENV_VAR",
  UNRESOLVED_IMPORT: "UNRESOLVED_IMPORT",
  TARGET_OUTSIDE_PROJECT: "TARGET_OUTSIDE_PROJECT",
  NOT_WRITABLE: "NOT_WRITABLE",
  DECISION_REQUIRED: "DECISION_REQUIRED",
  CANCELLED: "CANCELLED",
  INSTALL_FAILED: "INSTALL_FAILED",
  INVALID_TABLE_NAME: "INVALID_TABLE_NAME",
  MISSING_DATABASE_URL: "MISSING_DATABASE_URL",
  MISSING_AWS_CONFIG: "MISSING_AWS_CONFIG",
  MISSING_DEPENDENCY: "MISSING_DEPENDENCY",
  MIGRATION_FAILED: "MIGRATION_FAILED",
  INVALID_OPTION: "INVALID_OPTION",
  UNSUPPORTED_VERSION: "UNSUPPORTED_VERSION",
  WORKSPACE_ROOT: "WORKSPACE_ROOT",
  UNEXPECTED: "UNEXPECTED",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export type BlocksErrorOptions = { cause?: unknown; suggestion?: string };

/**
 * The one error type the CLI throws on purpose; anything else is reported as UNEXPECTED.
 *
 * @example
 * throw new BlocksError("UNKNOWN_BLOCK", 'There is no block named "cache".', { suggestion: "Run `blocks list`." });
 */
export class BlocksError extends Error {
  override readonly name = "BlocksError";
  readonly code: ErrorCode;
  readonly suggestion: string | undefined;

  constructor(code: ErrorCode, message: string, options: BlocksErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.suggestion = options.suggestion;
  }

  toJSON() {
    return { code: this.code, message: this.message, cause: describeCause(this.cause), suggestion: this.suggestion };
  }
}

/**
 * Recognises a BlocksError by its code rather than `instanceof`, so two copies of the CLI still agree.
 *
 * @example
 * if (isBlocksError(err) && err.code === "DECISION_REQUIRED") process.exitCode = 1;
 */
export function isBlocksError(err: unknown): err is BlocksError {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === "string" && (Object.values(ErrorCode) as string[]).includes(code);
}

/**
 * The cause as one readable line, or undefined when there is none.
 *
 * @example
 * describeCause(new Error("ECONNREFUSED")); // "ECONNREFUSED"
 */
export function describeCause(cause: unknown): string | undefined {
  if (cause === undefined || cause === null) return undefined;
  if (cause instanceof Error) return cause.message;
  return String(cause);
}
