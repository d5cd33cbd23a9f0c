import { describe, expect, it } from "vitest";
import { answeredError } from "./error-body";
import { createProblemHandler } from "./problem";

const toProblem = createProblemHandler({ logger: { error() {}, warn() {}, info() {} } });
const body = (code: string) =>
  JSON.stringify({ error: { code, message: "A request with this key is still running." } });

describe("answeredError", () => {
  it("recognises another block's error answer by its code, with its Retry-After", () => {
    expect(answeredError(toProblem, 409, "application/json; charset=utf-8", body("REQUEST_IN_PROGRESS"), "1")).toEqual({
      name: "AnsweredError",
      code: "REQUEST_IN_PROGRESS",
      message: "A request with this key is still running.",
      status: 409,
      headers: { "retry-after": "1" },
    });
  });

  it("leaves every other response alone", () => {
    expect(answeredError(toProblem, 409, "application/json", body("OUT_OF_STOCK"))).toBeUndefined();
    expect(answeredError(toProblem, 200, "application/json", body("REQUEST_IN_PROGRESS"))).toBeUndefined();
    expect(answeredError(toProblem, 409, "text/plain", body("REQUEST_IN_PROGRESS"))).toBeUndefined();
    expect(answeredError(toProblem, 409, "application/json", "{not json")).toBeUndefined();
    expect(answeredError(toProblem, 409, "application/json", "null")).toBeUndefined();
  });
});
