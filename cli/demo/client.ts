// The demo's scripted client: first request, retry, different payload, concurrent duplicate.
import { randomUUID } from "node:crypto";

export type Exchange = { label: string; status: number; body: string; headers: Headers };

/**
 * @example
 * const step = await post(base, "key-1", { amount: 4200, currency: "EUR" }, "first request");
 */
export async function post(base: string, key: string, payload: unknown, label: string): Promise<Exchange> {
  const response = await fetch(`${base}/payments`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key, "x-user-id": "user_42" },
    body: JSON.stringify(payload),
  });
  return { label, status: response.status, body: await response.text(), headers: response.headers };
}

/**
 * The card charges the server counted, to show what actually ran.
 *
 * @example
 * await charges("http://127.0.0.1:4000"); // 2
 */
export async function charges(base: string): Promise<number> {
  const response = await fetch(`${base}/charges`);
  return ((await response.json()) as { charges: number }).charges;
}

export type Scenario = { exchanges: Exchange[]; charges: number; replayIdentical: boolean };

/**
 * Plays the four situations a client meets and returns what it saw.
 *
 * @example
 * const { exchanges, charges } = await playScenario("http://127.0.0.1:4000");
 */
export async function playScenario(base: string): Promise<Scenario> {
  const key = `order-${randomUUID().slice(0, 8)}`;
  const payment = { amount: 4200, currency: "EUR" };
  const first = await post(base, key, payment, "1. first request");
  const retry = await post(base, key, payment, "2. retry, same key and payload");
  const reused = await post(base, key, { amount: 9900, currency: "EUR" }, "3. same key, different payload");
  const other = `order-${randomUUID().slice(0, 8)}`;
  const original = post(base, other, payment, "4a. new key, first copy");
  await new Promise((resolve) => setTimeout(resolve, 100));
  const duplicate = await post(base, other, payment, "4b. concurrent duplicate");
  const exchanges = [first, retry, reused, await original, duplicate];
  return {
    exchanges,
    charges: await charges(base),
    replayIdentical: first.body === retry.body && first.status === retry.status,
  };
}
