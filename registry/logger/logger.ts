// The app's pino logger: level from LOG_LEVEL, JSON lines, secrets redacted, requestId on every line.
import { levels, pino, stdTimeFunctions } from "pino";
import type { DestinationStream, Level, Logger, LoggerOptions } from "pino";
import { getLoggerContext } from "./context";

const SECRET_HEADERS = [
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "Authorization",
  "Proxy-Authorization",
  "Cookie",
  "Set-Cookie",
  "X-Api-Key",
];

/**
 * Where header objects show up in practice, each `*` matching exactly one level: a bare field,
 * `headers`, `req.headers`, axios's `err.config.headers` and `err.response.config.headers`, got's
 * `err.options.headers` and `err.response.request.options.headers`, undici's `err.headers`.
 */
const HEADER_PARENTS = ["", "headers.", "*.headers.", "*.*.headers.", "*.*.*.headers.", "*.*.*.*.headers."];

/**
 * Fields that hold a whole request head as text or a flat list, so a header name cannot be picked
 * out: node's `ClientRequest._header` (axios's `err.request._header`, `err.response.request._header`)
 * and `outputData` (a head not yet flushed), and `IncomingMessage.rawHeaders`. Redacted whole.
 */
const RAW_HEADS = ["_header", "outputData", "rawHeaders"];
const RAW_HEAD_PARENTS = ["", "*.", "*.*.", "*.*.*."];

/**
 * The paths pino censors as "[Redacted]". Add your own secrets to the lists above or here.
 *
 * @example
 * createLogger({ redact: [...REDACT_PATHS, "body.password", "*.apiKey"] });
 */
export const REDACT_PATHS: readonly string[] = [
  ...HEADER_PARENTS.flatMap((parent) => SECRET_HEADERS.map((name) => `${parent}["${name}"]`)),
  ...RAW_HEAD_PARENTS.flatMap((parent) => RAW_HEADS.map((name) => `${parent}${name}`)),
];

type LevelOrSilent = Level | "silent";

/** LOG_LEVEL if it names a pino level (any case), else undefined so the caller can fall back. */
function parseLevel(value: string | undefined): LevelOrSilent | undefined {
  const level = value?.trim().toLowerCase();
  if (level === "silent" || (level !== undefined && Object.hasOwn(levels.values, level))) return level as LevelOrSilent;
  return undefined;
}

/** Adds the request's id to each line; a fresh object each time because pino merges into it. */
function contextFields(): Record<string, unknown> {
  const context = getLoggerContext();
  return context ? { requestId: context.requestId } : {};
}

/**
 * Builds a pino logger with this block's defaults; `options` override them key by key.
 * `destination` defaults to stdout (pass a stream in tests, or `pino.destination(...)`).
 *
 * @example
 * const logger = createLogger({ name: "billing" });
 * const testLogger = createLogger({ level: "debug" }, { write: (line) => lines.push(JSON.parse(line)) });
 */
export function createLogger(options: LoggerOptions = {}, destination?: DestinationStream): Logger {
  const envLevel = process.env.LOG_LEVEL;
  const level = parseLevel(envLevel);
  const logger = pino(
    {
      level: level ?? "info",
      // Level names rather than numbers, so log queries read `level:"warn"`.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: stdTimeFunctions.isoTime,
      redact: [...REDACT_PATHS],
      mixin: contextFields,
      ...options,
    },
    destination,
  );
  if (envLevel && !level && options.level === undefined) {
    logger.warn({ LOG_LEVEL: envLevel }, "logger: unknown LOG_LEVEL, using info");
  }
  return logger;
}

/**
 * The shared application logger. Pass it to the idempotency handler as is.
 *
 * @example
 * import { logger } from "@/blocks/logger";
 * logger.info({ orderId }, "order placed");
 * const handler = new IdempotencyHandler(store, cache, { logger });
 */
export const logger: Logger = createLogger();
