// The error handler's public surface; framework adapters live in ./adapters.
export { answeredError, type AnsweredError } from "./error-body";
export { classifyError, FORWARDED_ERROR_HEADERS, type Classified, type ClassifyOptions } from "./classify";
export { validationIssues, type ProblemIssue } from "./issues";
export { consoleLogger, logProblem, type LogMethod, type ProblemLogger } from "./log";
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
export { pickRequestId } from "./request-id";
export { codeOfStatus, DEFAULT_STATUSES, isErrorStatus, statusTitle, type StatusTable } from "./status-table";
