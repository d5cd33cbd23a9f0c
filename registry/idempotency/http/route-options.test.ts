import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import type { FrameworkDefaults } from "./route-options";
import { ANONYMOUS_USER_ID } from "./user-id";

type Req = { user?: { id: string } };
const framework: FrameworkDefaults<Req> = {
  userIdOf: (req) => req.user?.id,
  operationOf: () => "POST /payments",
  bodyOf: () => ({}),
};

// A fresh module per test: warnings are printed once per process, and each test counts its own.
const load = async () => (await import("./route-options")).resolveRouteOptions;

describe("resolveRouteOptions", () => {
  let emitWarning: MockInstance<typeof process.emitWarning>;
  beforeEach(() => {
    vi.resetModules();
    emitWarning = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
  });
  afterEach(() => {
    // Stubbed, not assigned: Next.js types NODE_ENV read-only, and type-checks vendored tests.
    vi.unstubAllEnvs();
    emitWarning.mockRestore();
  });

  it("uses the framework's user by default", async () => {
    const route = (await load())({}, framework);
    expect(await route.getUserId({ user: { id: "u_1" } }, true)).toBe("u_1");
    expect(emitWarning).not.toHaveBeenCalled();
  });

  it("falls back to the anonymous user with one warning outside production", async () => {
    vi.stubEnv("NODE_ENV", "development");
    const route = (await load())({}, framework);
    expect(await route.getUserId({}, false)).toBe(ANONYMOUS_USER_ID);
    expect(await route.getUserId({}, false)).toBe(ANONYMOUS_USER_ID);
    expect(emitWarning).toHaveBeenCalledTimes(1);
    expect(emitWarning).toHaveBeenCalledWith(
      expect.stringContaining("anonymous"),
      expect.objectContaining({ code: "IDEMPOTENCY_SETUP" }),
    );
  });

  it("stays quiet about the anonymous user when the route allows it", async () => {
    const route = (await load())({ allowAnonymous: true }, framework);
    expect(await route.getUserId({}, false)).toBe(ANONYMOUS_USER_ID);
    expect(emitWarning).not.toHaveBeenCalled();
  });

  // Regression: hono/jwt and @fastify/jwt set a user the default lookup misses.
  it("refuses a request with credentials but no readable user as a setup error, warned once, never anonymous", async () => {
    const route = (await load())({ allowAnonymous: true }, framework);
    await expect(route.getUserId({}, true)).rejects.toMatchObject({
      code: "IDEMPOTENCY_SETUP",
      message: expect.stringContaining("getUserId") as unknown,
    });
    await expect(route.getUserId({}, true)).rejects.toMatchObject({ code: "IDEMPOTENCY_SETUP" });
    expect(emitWarning).toHaveBeenCalledTimes(1);
  });

  // Regression: the anonymous scope used to be "anonymous", a possible real id.
  it("keeps the anonymous scope apart from every real user id", async () => {
    const resolve = await load();
    expect(await resolve({}, framework).getUserId({ user: { id: "anonymous" } }, false)).toBe("anonymous");
    expect(ANONYMOUS_USER_ID).not.toBe("anonymous");
    await expect(resolve({}, framework).getUserId({ user: { id: ANONYMOUS_USER_ID } }, false)).rejects.toMatchObject({
      code: "IDEMPOTENCY_SETUP",
    });
    await expect(resolve({ getUserId: () => ANONYMOUS_USER_ID }, framework).getUserId({}, false)).rejects.toMatchObject(
      { code: "IDEMPOTENCY_SETUP" },
    );
  });

  it("refuses a replay marker that is not a header name", async () => {
    const resolve = await load();
    expect(() => resolve({ replayedHeader: "Idempotent Replayed" }, framework)).toThrow(/replayedHeader/);
    expect(resolve({ replayedHeader: false }, framework).replayedHeader).toBeUndefined();
    expect(resolve({}, framework).replayedHeader).toBe("idempotent-replayed");
  });

  it("refuses a route without getUserId in production, unless it allows anonymous", async () => {
    vi.stubEnv("NODE_ENV", "production");
    const resolve = await load();
    expect(() => resolve({}, framework)).toThrow(/getUserId/);
    expect(() => resolve({ allowAnonymous: true }, framework)).not.toThrow();
    expect(() => resolve({ getUserId: () => "u_1" }, framework)).not.toThrow();
  });

  it("answers idempotency errors itself by default, and refuses an `errors` value it does not know", async () => {
    const resolve = await load();
    expect(resolve({}, framework).errors).toBe("answer");
    expect(resolve({ errors: "throw" }, framework).errors).toBe("throw");
    expect(() => resolve({ errors: "next" as "throw" }, framework)).toThrow(
      /`errors` must be "answer" or "throw", got "next"/,
    );
  });

  it("refuses, when the route is created, to replay a header that must never be replayed", async () => {
    const resolve = await load();
    expect(() => resolve({ replayHeaders: ["Set-Cookie"] }, framework)).toThrow(/set-cookie/);
  });
});
