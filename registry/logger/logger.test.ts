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
    expect(lines).toEqual([
      expect.objectContaining({ level: "warn", LOG_LEVEL: "verbose", msg: "logger: unknown LOG_LEVEL, using info" }),
    ]);

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

  // Regression: a failed axios call logged whole carried the bearer token in places the
  // redaction missed (`err.request._header`, `err.response.config.headers`).
  it.each([
    [
      "axios (config, response.config, the request head of node's ClientRequest)",
      {
        config: { headers: { Authorization: "Bearer T0KEN", "X-Api-Key": "T0KEN" } },
        request: {
          _header: "POST /charge HTTP/1.1\r\nAuthorization: Bearer T0KEN\r\n\r\n",
          _redirectable: { _options: { headers: { authorization: "Bearer T0KEN" } } },
        },
        response: {
          status: 502,
          config: { headers: { Authorization: "Bearer T0KEN" } },
          request: { _header: "POST /charge HTTP/1.1\r\nAuthorization: Bearer T0KEN\r\n\r\n" },
        },
      },
    ],
    [
      "got (options, response.request.options)",
      {
        options: { headers: { authorization: "Bearer T0KEN", cookie: "sid=T0KEN" } },
        response: { request: { options: { headers: { authorization: "Bearer T0KEN" } } } },
      },
    ],
    [
      "undici and fetch (a response error's headers, a cause)",
      { headers: { "set-cookie": ["sid=T0KEN"] }, cause: { headers: { authorization: "Bearer T0KEN" } } },
    ],
    [
      "node's http (a ClientRequest's head, unflushed output, an IncomingMessage's raw headers)",
      {
        req: {
          _header: "GET / HTTP/1.1\r\nCookie: sid=T0KEN\r\n\r\n",
          outputData: [{ data: "Authorization: Bearer T0KEN" }],
          res: { rawHeaders: ["Set-Cookie", "sid=T0KEN"] },
        },
      },
    ],
  ])("redacts the header locations of %s", (_, err) => {
    const { logger, lines } = captureLogs();
    logger.error({ err: Object.assign(new Error("request failed"), err) }, "outgoing call failed");
    expect(lines[0]).toMatchObject({ err: { message: "request failed" } });
    expect(JSON.stringify(lines)).not.toContain("T0KEN");
  });

  it("masks the credentials of a URL inside an error's message, stack and fields", () => {
    const { logger, lines } = captureLogs();
    const err = Object.assign(new Error("connect ECONNREFUSED postgres://admin:hunter2@db.internal:5432/prod"), {
      config: { url: "https://ghp_token123@api.example.com/repos?page=2" },
    });
    logger.error({ err }, "request failed");
    const logged = lines[0] as unknown as { err: { message: string; stack: string; config: { url: string } } };
    expect(logged.err.message).toBe("connect ECONNREFUSED postgres://[Redacted]@db.internal:5432/prod");
    expect(logged.err.stack).toContain("postgres://[Redacted]@db.internal:5432/prod");
    expect(logged.err.config.url).toBe("https://[Redacted]@api.example.com/repos?page=2");
    for (const secret of ["hunter2", "ghp_token123"]) expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it("redacts the head of a real node ClientRequest", async () => {
    const { request } = await import("node:http");
    const req = request({ host: "127.0.0.1", port: 9, headers: { authorization: "Bearer T0KEN" } });
    req.on("error", () => {});
    req.flushHeaders();
    const { logger, lines } = captureLogs();
    logger.error({ err: Object.assign(new Error("connect ECONNREFUSED"), { request: req }) }, "outgoing call failed");
    req.destroy();
    expect(JSON.stringify(lines)).not.toContain("T0KEN");
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
