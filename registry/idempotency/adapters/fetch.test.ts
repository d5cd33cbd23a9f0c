// Route tests for the fetch adapter, written as a Next.js route handler is: copy them next to your own routes.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { IdempotencyHandler } from "../handler";
import { MemoryStore } from "../testing/memory-store";
import { idempotent, withIdempotency } from "./fetch";

/** Your app's auth, here a header; in Next.js it is your session (`await auth()`). */
const getUserId = (request: Request) => request.headers.get("x-user-id") ?? "anonymous";

function paymentsRoute() {
  const charges: number[] = [];
  let release: () => void = () => {};
  let charging: () => void = () => {};
  let hold: Promise<void> | undefined;
  const POST = withIdempotency(
    new IdempotencyHandler(new MemoryStore()),
    { getUserId, getOperation: () => "POST /api/payments", requireKey: true },
    async (request: Request) => {
      const { amount } = (await request.json()) as { amount: number };
      charges.push(amount);
      charging();
      await hold;
      return Response.json({ id: `pay_${charges.length}`, amount }, { status: 201 });
    },
  );
  return {
    POST,
    charges,
    /** Holds the next charge until `release()`; resolves once it is running, to send a duplicate meanwhile. */
    holdCharge(): Promise<void> {
      hold = new Promise<void>((resolve) => (release = resolve));
      return new Promise<void>((resolve) => (charging = resolve));
    },
    release: () => release(),
  };
}

function payment(key: string | undefined, body: object = { amount: 100 }, user = "u_1"): Request {
  const headers: Record<string, string> = { "content-type": "application/json", "x-user-id": user };
  if (key !== undefined) headers["idempotency-key"] = key;
  return new Request("http://localhost/api/payments", { method: "POST", headers, body: JSON.stringify(body) });
}

describe("POST /api/payments with withIdempotency", () => {
  it("replays a retry byte for byte, and charges once", async () => {
    const route = paymentsRoute();
    const key = randomUUID();
    const first = await route.POST(payment(key), undefined);
    const retry = await route.POST(payment(key), undefined);
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(await retry.text()).toBe(await first.text());
    expect(retry.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(route.charges).toEqual([100]);
  });

  it("answers the same key with another payload 409", async () => {
    const route = paymentsRoute();
    const key = randomUUID();
    await route.POST(payment(key, { amount: 100 }), undefined);
    const reused = await route.POST(payment(key, { amount: 999 }), undefined);
    expect(reused.status).toBe(409);
    expect(await reused.json()).toMatchObject({ error: { code: "KEY_REUSED_WITH_DIFFERENT_REQUEST" } });
    expect(route.charges).toEqual([100]);
  });

  it("answers a duplicate sent while the first runs 409 with Retry-After, and charges once", async () => {
    const route = paymentsRoute();
    const charging = route.holdCharge();
    const key = randomUUID();
    const first = route.POST(payment(key), undefined);
    await charging;
    const duplicate = await route.POST(payment(key), undefined);
    route.release();
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect((await first).status).toBe(201);
    expect(route.charges).toEqual([100]);
  });

  it("answers a request without a key 400", async () => {
    const route = paymentsRoute();
    const response = await route.POST(payment(undefined), undefined);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "IDEMPOTENCY_KEY_MISSING" } });
    expect(route.charges).toEqual([]);
  });

  it("sends the first answer with the route's own status text and headers, and replays only the recorded ones", async () => {
    const POST = withIdempotency(
      new IdempotencyHandler(new MemoryStore()),
      { getUserId, getOperation: () => "POST /api/payments" },
      () => {
        const headers = new Headers({ "content-type": "application/json", location: "/api/payments/pay_1" });
        headers.append("set-cookie", "a=1");
        headers.append("set-cookie", "b=2");
        return new Response('{"id":"pay_1"}', { status: 201, statusText: "Created here", headers });
      },
    );
    const key = randomUUID();
    const first = await POST(payment(key), undefined);
    const retry = await POST(payment(key), undefined);
    expect(first.statusText).toBe("Created here");
    expect(first.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(retry.headers.getSetCookie()).toEqual([]);
    expect(retry.headers.get("location")).toBe("/api/payments/pay_1");
    expect(await retry.text()).toBe(await first.text());
  });

  it("keeps users apart: the same key from another user is another payment", async () => {
    const route = paymentsRoute();
    const key = randomUUID();
    await route.POST(payment(key, { amount: 100 }, "u_1"), undefined);
    const other = await route.POST(payment(key, { amount: 100 }, "u_2"), undefined);
    expect(other.status).toBe(201);
    expect(route.charges).toEqual([100, 100]);
  });
});

describe("idempotent() for routes that return { status, body }", () => {
  class CardDeclined extends Error {}

  it("fails the key on a permanent error, and frees it on any other", async () => {
    let attempts = 0;
    const POST = idempotent(new IdempotencyHandler(new MemoryStore()), {
      getUserId,
      getOperation: () => "POST /api/payments",
      isPermanentError: (err) => err instanceof CardDeclined,
      run: async (request) => {
        attempts++;
        const { amount } = (await request.json()) as { amount: number };
        if (amount > 500) throw new CardDeclined("card declined");
        if (attempts === 1) throw new Error("bank timeout");
        return { status: 201, body: { id: "pay_1", amount } };
      },
    });
    const [retried, declined] = [randomUUID(), randomUUID()];
    // Your framework answers a thrown error (Next.js: 500); the key is free for the client's retry.
    await expect(POST(payment(retried), undefined)).rejects.toThrow("bank timeout");
    expect((await POST(payment(retried), undefined)).status).toBe(201);
    await expect(POST(payment(declined, { amount: 900 }), undefined)).rejects.toThrow("card declined");
    const again = await POST(payment(declined, { amount: 900 }), undefined);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { code: "REQUEST_FAILED" } });
    expect(attempts).toBe(3);
  });
});
