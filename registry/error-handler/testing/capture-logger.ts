// A ProblemLogger that keeps its lines in memory, for tests.
import type { BlockLogger as ProblemLogger } from "../logger";

export type CapturedLine = { level: "error" | "warn" | "info" | "debug"; msg: string } & Record<string, unknown>;

/**
 * @example
 * const { logger, lines } = captureLogger();
 * // ... answer an error ...
 * expect(lines[0]).toMatchObject({ level: "error", code: "INTERNAL_ERROR" });
 */
export function captureLogger(): { logger: ProblemLogger; lines: CapturedLine[] } {
  const lines: CapturedLine[] = [];
  const at = (level: CapturedLine["level"]) => (obj: Record<string, unknown>, msg: string) =>
    void lines.push({ ...obj, level, msg });
  return { logger: { error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug") }, lines };
}
