// Test helper: a logger built like the real one whose lines land in an array instead of stdout.
import type { LoggerOptions } from "pino";
import { createLogger } from "../logger";

/**
 * One parsed line, as pino wrote it.
 *
 * @example
 * const failures = lines.filter((line: LogLine) => line.level === "error");
 */
export type LogLine = Record<string, unknown> & { level: string; msg?: string; requestId?: string };

/**
 * Returns a debug-level logger with the block's defaults and the parsed lines it wrote.
 *
 * @example
 * const { logger, lines } = captureLogs();
 * await runWithLoggerContext("req-1", async () => logger.info("hi"));
 * expect(lines[0]).toMatchObject({ requestId: "req-1", msg: "hi" });
 */
export function captureLogs(options: LoggerOptions = {}) {
  const lines: LogLine[] = [];
  const logger = createLogger(
    { level: "debug", ...options },
    { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  );
  return { logger, lines };
}
