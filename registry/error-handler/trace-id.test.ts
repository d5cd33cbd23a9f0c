import { expect, it } from "vitest";
import { createProblemHandler } from "./problem";
import { captureLogger } from "./testing/capture-logger";
import { traceIdOfTraceparent } from "./trace-id";

it("reads the trace id of a valid W3C traceparent, and nothing from a malformed one", () => {
  expect(traceIdOfTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toBe(
    "4bf92f3577b34da6a3ce929d0e0e4736",
  );
  for (const header of [
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
    "<script>",
    undefined,
  ])
    expect(traceIdOfTraceparent(header), String(header)).toBeUndefined();
});

it("puts the trace id in the problem and its log line", () => {
  const { logger, lines } = captureLogger();
  const problem = createProblemHandler({ logger })(new Error("boom"), {
    requestId: "r",
    traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  });
  expect(problem.body.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  expect(lines[0]).toMatchObject({ level: "error", traceId: "4bf92f3577b34da6a3ce929d0e0e4736" });
});
