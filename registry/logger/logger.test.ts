import { afterEach, describe, expect, it, vi } from "vitest";
import { runWithLoggerContext } from "./context";
import { createLogger } from "./logger";
import { captureLogs, type LogLine } from "./testing/capture-logs";

/** Builds the logger the way the module does at import, reading the environment now. */
function loggerFromEnv() {
  const lines: LogLine[] = [];
  const logger = createLogger({}, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("createLogger", () => {
  it("writes one JSON object per line with the level name, an ISO time and the message", () => {
    const raw: string[] = [];
    const logger = createLogger({}, { write: (line: string) => void raw.push(line) });
    logger.info({ orderId: "o_1" }, "order placed");

    expect(raw).toHaveLength(1);
    expect(raw[0]?.endsWith("\n")).toBe(true);
    const line = JSON.parse(raw[0] ?? "") as LogLine;
    expect(line).toMatchObject({ level: "info", orderId: "o_1", msg: "order placed" });
    expect(new Date(String(line.time)).toISOString()).toBe(line.time);
  });

  it("takes its level from LOG_LEVEL, in any case", () => {
    vi.stubEnv("LOG_LEVEL", " WARN ");
    const { logger, lines } = loggerFromEnv();
    logger.info("hidden");
    logger.warn("shown");
    expect(logger.level).toBe("warn");
    expect(lines.map((line) => line.msg)).toEqual(["shown"]);
  });

  it("defaults to info, and says so when LOG_LEVEL names no level", () => {
    vi.stubEnv("LOG_LEVEL", "verbose");
    const { logger, lines } = loggerFromEnv();
    logger.debug("hidden");
    expect(logger.level).toBe("info");
    expect(lines).toEqual([expect.objectContaining({ level: "warn", LOG_LEVEL: "verbose", msg: "logger: unknown LOG_LEVEL, using info" })]);

    vi.stubEnv("LOG_LEVEL", "");
    expect(loggerFromEnv().logger.level).toBe("info");
    vi.stubEnv("LOG_LEVEL", "constructor"); // inherited by every object, yet no level
    expect(loggerFromEnv().logger.level).toBe("info");
  });

  it("redacts authorization and cookie fields, bare and in nested headers", () => {
    const { logger, lines } = captureLogs();
    logger.info(
      {
        authorization: "Bearer top",
        headers: { cookie: "sid=1", "x-trace": "kept" },
        req: { headers: { authorization: "Bearer req", "proxy-authorization": "Basic p" } },
        res: { headers: { "set-cookie": ["sid=2"] } },
        err: { config: { headers: { Authorization: "Bearer axios", Cookie: "sid=3" } } },
      },
      "outgoing call failed",
    );

    expect(lines[0]).toMatchObject({
      authorization: "[Redacted]",
      headers: { cookie: "[Redacted]", "x-trace": "kept" },
      req: { headers: { authorization: "[Redacted]", "proxy-authorization": "[Redacted]" } },
      res: { headers: { "set-cookie": "[Redacted]" } },
      err: { config: { headers: { Authorization: "[Redacted]", Cookie: "[Redacted]" } } },
    });
    expect(JSON.stringify(lines)).not.toMatch(/Bearer|sid=|Basic/);
  });

  it("stamps requestId from the context on lines of child loggers too, and lets an explicit field win", () => {
    const { logger, lines } = captureLogs();
    runWithLoggerContext("req-7", () => {
      logger.child({ component: "billing" }).info("charged");
      logger.info({ requestId: "explicit" }, "override");
    });
    expect(lines).toEqual([
      expect.objectContaining({ component: "billing", requestId: "req-7", msg: "charged" }),
      expect.objectContaining({ requestId: "explicit", msg: "override" }),
    ]);
  });
});
