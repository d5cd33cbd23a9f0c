import { expect, it } from "vitest";
import { RateLimiter } from "../limiter";
import { MemoryRateLimitStore } from "../stores/memory-store";
import { withRateLimit } from "./fetch";

// A fetch-standard handler, as a Next.js route handler, Bun.serve or Deno.serve would call it.
const POST = withRateLimit(
  new RateLimiter(new MemoryRateLimitStore(), { name: "payments", limit: 1, windowMs: 60_000 }),
  { getUserId: (request) => request.headers.get("x-user") ?? undefined, getRoute: () => "POST /api/payments/[id]" },
  () => Response.json({ id: "pay_1" }, { status: 201 }),
);
const request = (user: string, id = "p_1") =>
  new Request(`http://localhost/api/payments/${id}`, { method: "POST", headers: { "x-user": user } });

it("adds the RateLimit headers to the handler's response, then answers 429 RATE_LIMITED", async () => {
  const first = await POST(request("u_1"));
  expect(first.status).toBe(201);
  expect(await first.json()).toEqual({ id: "pay_1" });
  expect(first.headers.get("ratelimit")).toBe('"payments";r=0;t=60');

  // Another id, the same route template: the same quota.
  const refused = await POST(request("u_1", "p_2"));
  expect(refused.status).toBe(429);
  expect(refused.headers.get("retry-after")).toBe("60");
  expect(await refused.json()).toMatchObject({ error: { code: "RATE_LIMITED" } });
  expect((await POST(request("u_2"))).status).toBe(201);
});

it("asks for the route template: the concrete path would give every id its own quota", () => {
  const limiter = new RateLimiter(new MemoryRateLimitStore(), { limit: 1, windowMs: 60_000 });
  const options = { getUserId: () => "u_1" } as unknown as Parameters<typeof withRateLimit>[1];
  expect(() => withRateLimit(limiter, options, () => new Response())).toThrow(/needs getUserId and getRoute/);
});
