// IdempotencyError: recognised by code across copies, mapped to the documented statuses.
import { describe, expect, it } from "vitest";
import { IdempotencyError, idempotencyErrorStatus, isIdempotencyError } from "./errors";

describe("idempotencyErrorStatus", () => {
  it.each([
    ["IDEMPOTENCY_KEY_MISSING", 400],
    ["IDEMPOTENCY_KEY_INVALID", 400],
    ["RECORD_NOT_FOUND", 404],
    ["KEY_REUSED_WITH_DIFFERENT_REQUEST", 409],
    ["REQUEST_IN_PROGRESS", 409],
    ["REQUEST_FAILED", 409],
    ["STORE_UNAVAILABLE", 503],
  ] as const)("maps %s to %i", (code, status) => {
    expect(idempotencyErrorStatus(new IdempotencyError(code, "x"))).toBe(status);
  });

  it("gives 500 for any other error and honours a statusMap", () => {
    expect(idempotencyErrorStatus(new Error("boom"))).toBe(500);
    expect(idempotencyErrorStatus(new IdempotencyError("REQUEST_IN_PROGRESS", "x"), { REQUEST_IN_PROGRESS: 425 })).toBe(
      425,
    );
  });
});

describe("isIdempotencyError", () => {
  it("recognises an error from another copy of the module by its name and code", () => {
    const foreign = Object.assign(new Error("x"), { name: "IdempotencyError", code: "REQUEST_FAILED" });
    expect(isIdempotencyError(foreign)).toBe(true);
    expect(isIdempotencyError(Object.assign(new Error("x"), { code: "ECONNREFUSED" }))).toBe(false);
  });

  it("serializes to the documented body", () => {
    expect(new IdempotencyError("REQUEST_FAILED", "failed").toJSON()).toEqual({
      error: { code: "REQUEST_FAILED", message: "failed" },
    });
  });
});
