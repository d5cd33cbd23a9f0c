// The error handler's public surface; framework adapters live in ./adapters.
export { answeredError, type AnsweredError } from "./error-body";
export { classifyError, FORWARDED_ERROR_HEADERS, type Classified, type ClassifyOptions } from "./classify";
export { CLIENT_ANSWER, declaredStatus, type DeclaredStatus } from "./declared";
export {
  defineProblem,
  isProblemError,
  ProblemError,
  type ProblemDefinition,
  type ProblemExtensions,
  type ProblemSpec,
  type ResolvedProblem,
} from "./define-problem";
export { isDownstreamError } from "./downstream";
export { fromHttpException } from "./http-exception";
export { jsonPointer, schemaIssues, type ProblemIssue, type SchemaIssue } from "./issues";
export { localizeFrom, negotiateLanguage, type Localize, type LocalizedText, type ProblemCatalog } from "./localize";
export { logProblem } from "./log";
export { consoleLogger, silentLogger, type BlockLogger as ProblemLogger, type LogMethod } from "./logger";
export {
  createProblemHandler,
  PROBLEM_CONTENT_TYPE,
  ROUTE_NOT_FOUND,
  type ErrorHandlerOptions,
  type Problem,
  type ProblemBody,
  type ProblemMetrics,
  type ProblemRequest,
  type ToProblem,
} from "./problem";
export { problemSchemas, schemaName, type JsonSchema, type ProblemSchemasOptions } from "./problem-schemas";
export { pickRequestId } from "./request-id";
export {
  parseRequest,
  requestValidationError,
  RequestValidationError,
  type StandardSchema,
} from "./request-validation";
export { activeSpanTraceId, traceIdOf, traceIdOfTraceparent } from "./trace-id";
export {
  BLOCK_STATUSES,
  codeOfStatus,
  DEFAULT_STATUSES,
  isErrorStatus,
  statusTitle,
  type StatusTable,
} from "./status-table";
