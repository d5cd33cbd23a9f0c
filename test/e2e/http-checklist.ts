// The HTTP checklist against a fixture project's real server: replay, 409, concurrent duplicates, 400, users apart.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";

/**
 * What every fixture app serves: `POST <payments>` (idempotent, key required, user from `x-user-id`,
 * JSON `{ amount }`, answers 201 `{ id: "pay_<run>", amount }`, waits `x-slow-ms` first) and
 * `GET <runs>` answering `{ runs }`, how many times the payment logic ran.
 */
export type ChecklistApp = { base: () => string; payments: string; runs: string };

export function httpChecklist(app: ChecklistApp): void {
  const pay = (key: string | undefined, options: { amount?: number; user?: string; slowMs?: number } = {}) => {
    const headers: Record<string, string> = { "content-type": "application/json", "x-user-id": options.user ?? "u_1" };
    if (key !== undefined) headers["idempotency-key"] = key;
    if (options.slowMs !== undefined) headers["x-slow-ms"] = String(options.slowMs);
    return fetch(app.base() + app.payments, {
      method: "POST",
      headers,
      body: JSON.stringify({ amount: options.amount ?? 100 }),
    });
  };
  const runs = async () => ((await (await fetch(app.base() + app.runs)).json()) as { runs: number }).runs;
  const code = async (response: Response) => ((await response.json()) as { error?: { code?: string } }).error?.code;

  it("replays a duplicate byte for byte, and the logic runs once", async () => {
    const before = await runs();
    const key = randomUUID();
    const first = await pay(key);
    const firstBody = Buffer.from(await first.arrayBuffer());
    const replay = await pay(key);
    const replayBody = Buffer.from(await replay.arrayBuffer());
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replayBody.equals(firstBody)).toBe(true);
    expect(replay.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(await runs()).toBe(before + 1);
  });

  it("answers the same key with another payload 409 KEY_REUSED_WITH_DIFFERENT_REQUEST", async () => {
    const key = randomUUID();
    expect((await pay(key, { amount: 100 })).status).toBe(201);
    const before = await runs();
    const reused = await pay(key, { amount: 999 });
    expect(reused.status).toBe(409);
    expect(await code(reused)).toBe("KEY_REUSED_WITH_DIFFERENT_REQUEST");
    expect(await runs()).toBe(before);
  });

  it("runs concurrent duplicates once: the others get 409 REQUEST_IN_PROGRESS or the replay", async () => {
    const before = await runs();
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 5 }, () => pay(key, { slowMs: 500 })));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    for (const response of responses.filter((candidate) => candidate.status === 409)) {
      expect(response.headers.get("retry-after")).not.toBeNull();
      expect(await code(response)).toBe("REQUEST_IN_PROGRESS");
    }
    expect(await runs()).toBe(before + 1);
  });

  it("answers a missing key 400 IDEMPOTENCY_KEY_MISSING without running the logic", async () => {
    const before = await runs();
    const response = await pay(undefined);
    expect(response.status).toBe(400);
    expect(await code(response)).toBe("IDEMPOTENCY_KEY_MISSING");
    expect(await runs()).toBe(before);
  });

  it("isolates users: the same key from another user runs again", async () => {
    const key = randomUUID();
    const first = (await (await pay(key, { user: "u_1" })).json()) as { id: string };
    const before = await runs();
    const other = await pay(key, { user: "u_2" });
    expect(other.status).toBe(201);
    expect(((await other.json()) as { id: string }).id).not.toBe(first.id);
    expect(await runs()).toBe(before + 1);
  });
}
