import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { FrameworkDefaults } from "./route-options";

type Req = { user?: { id: string } };
const framework: FrameworkDefaults<Req> = { userIdOf: (req) => req.user?.id, operationOf: () => "POST /payments", bodyOf: () => ({}) };

// A fresh module per test: warnings are printed once per process, and each test counts its own.
const load = async () => (await import("./route-options")).resolveRouteOptions;

describe("resolveRouteOptions", () => {
  const nodeEnv = process.env.NODE_ENV;
  let emitWarning: ReturnType<typeof vi.spyOn>;
  beforeEach(() => {
    vi.resetModules();
    emitWarning = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
  });
  afterEach(() => {
    process.env.NODE_ENV = nodeEnv;
    emitWarning.mockRestore();
  });

  it("uses the framework's user by default", async () => {
    const route = (await load())({}, framework);
    expect(await route.getUserId({ user: { id: "u_1" } })).toBe("u_1");
    expect(emitWarning).not.toHaveBeenCalled();
  });

  it("falls back to the anonymous user with one warning outside production", async () => {
    process.env.NODE_ENV = "development";
    const route = (await load())({}, framework);
    expect(await route.getUserId({})).toBe("anonymous");
    expect(await route.getUserId({})).toBe("anonymous");
    expect(emitWarning).toHaveBeenCalledTimes(1);
    expect(emitWarning).toHaveBeenCalledWith(expect.stringContaining("anonymous"), expect.objectContaining({ code: "IDEMPOTENCY_SETUP" }));
  });

  it("stays quiet about the anonymous user when the route allows it", async () => {
    const route = (await load())({ allowAnonymous: true }, framework);
    expect(await route.getUserId({})).toBe("anonymous");
    expect(emitWarning).not.toHaveBeenCalled();
  });

  it("refuses a route without getUserId in production, unless it allows anonymous", async () => {
    process.env.NODE_ENV = "production";
    const resolve = await load();
    expect(() => resolve({}, framework)).toThrow(/getUserId/);
    expect(() => resolve({ allowAnonymous: true }, framework)).not.toThrow();
    expect(() => resolve({ getUserId: () => "u_1" }, framework)).not.toThrow();
  });

  it("refuses, when the route is created, to replay a header that must never be replayed", async () => {
    const resolve = await load();
    expect(() => resolve({ replayHeaders: ["Set-Cookie"] }, framework)).toThrow(/set-cookie/);
  });
});
