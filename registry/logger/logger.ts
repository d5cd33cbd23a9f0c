// The app's pino logger: level from LOG_LEVEL, JSON lines, secrets redacted, requestId on every line.
import { levels, pino, stdTimeFunctions } from "pino";
import type { DestinationStream, Level, Logger, LoggerOptions } from "pino";
import { getLoggerContext } from "./context";
import { serializeError } from "./redact-error";

const SECRET_HEADERS = [
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "Authorization",
  "Proxy-Authorization",
  "Cookie",
  "Set-Cookie",
];

/**
 * Where credentials show up outside an error: as a bare field, in a `headers` object, or in one
 * nested a level or two down (`req.headers`). Each `*` matches exactly one level. Errors go
 * through `serializeError`, which reaches the deeper places HTTP clients keep headers.
 */
const SECRET_PARENTS = ["", "*.", "headers.", "*.headers.", "*.*.headers."];

/**
 * The paths pino censors as "[Redacted]". Add your own secrets to the lists above or here.
 *
 * @example
 * createLogger({ redact: [...REDACT_PATHS, "body.password", "*.apiKey"] });
 */
export const REDACT_PATHS: readonly string[] = SECRET_PARENTS.flatMap((parent) =>
  SECRET_HEADERS.map((name) => `${parent}["${name}"]`),
);

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
      serializers: { err: serializeError },
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
