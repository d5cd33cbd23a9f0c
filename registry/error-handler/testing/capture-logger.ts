// A ProblemLogger that keeps its lines in memory, for tests.
import type { ProblemLogger } from "../log";

export type CapturedLine = { level: "error" | "info" | "debug"; msg: string } & Record<string, unknown>;

/**
 * @example
 * const { logger, lines } = captureLogger();
 * // ... answer an error ...
 * expect(lines[0]).toMatchObject({ level: "error", code: "INTERNAL_ERROR" });
 */
export function captureLogger(): { logger: ProblemLogger; lines: CapturedLine[] } {
  const lines: CapturedLine[] = [];
  const at = (level: CapturedLine["level"]) => (obj: Record<string, unknown>, msg: string) => void lines.push({ ...obj, level, msg });
  return { logger: { error: at("error"), info: at("info"), debug: at("debug") }, lines };
}
