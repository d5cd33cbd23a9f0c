// One suite every consumer adapter passes against its real broker: duplicates, redelivery, dead messages, concurrency.
import { describe, expect, it, vi } from "vitest";
import type { InboxMessage } from "@/blocks/idempotency/consume";
import { IdempotencyHandler } from "@/blocks/idempotency/handler";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { deferred } from "@/blocks/idempotency/testing/deferred";

export type Consume = (payload: unknown) => Promise<unknown>;
export type AdapterOptions = {
  source: string;
  onDead: (message: InboxMessage, err: unknown) => void;
  isPermanentError: (err: unknown) => boolean;
};

/** A broker under names of its own, with the adapter under test consuming from it. */
export type BrokerHarness = {
  /** Starts `workers` consumers running the adapter. */
  start(handler: IdempotencyHandler, options: AdapterOptions, process: Consume, workers?: number): Promise<void>;
  /** Sends one message; `messageId` undefined sends it without an id. */
  publish(messageId: string | undefined, payload: unknown): Promise<void>;
  /** How many messages the broker would still deliver: waiting, delayed, or delivered and not yet acknowledged. */
  pending(): Promise<number>;
  close(): Promise<void>;
};

class Declined extends Error {}
const WAIT = { timeout: 15_000, interval: 20 };

export function consumerContract(name: string, open: () => Promise<BrokerHarness>, skip: boolean): void {
  describe.skipIf(skip)(`${name} consumer adapter (contract)`, () => {
    async function run(
      maxRetries: number,
      scenario: (broker: BrokerHarness, handler: IdempotencyHandler, dead: string[]) => Promise<void>,
    ) {
      const broker = await open();
      const handler = new IdempotencyHandler(new MemoryStore(), undefined, { maxRetries });
      const dead: string[] = [];
      try {
        await scenario(broker, handler, dead);
      } finally {
        await broker.close();
      }
    }
    const options = (dead: string[]): AdapterOptions => ({
      source: "payments",
      onDead: (message) => void dead.push(message.messageId),
      isPermanentError: (err) => err instanceof Declined,
    });

    it("a message delivered twice runs once; both deliveries are acknowledged", async () => {
      await run(3, async (broker, handler, dead) => {
        const runs: unknown[] = [];
        await broker.start(handler, options(dead), async (payload) => runs.push(payload));
        await broker.publish("m-1", { amount: 1 });
        await broker.publish("m-1", { amount: 1 });
        await broker.publish("m-2", { amount: 2 });
        await vi.waitFor(() => expect(runs).toHaveLength(2), WAIT);
        await vi.waitFor(async () => expect(await broker.pending()).toBe(0), WAIT);
        expect(runs).toEqual([{ amount: 1 }, { amount: 2 }]);
      });
    });

    it("a transient failure is redelivered and runs once more, then succeeds", async () => {
      await run(3, async (broker, handler, dead) => {
        let calls = 0;
        let applied = 0;
        await broker.start(handler, options(dead), async () => {
          if (++calls === 1) throw new Error("ECONNRESET");
          applied++;
        });
        await broker.publish("m-1", {});
        await vi.waitFor(() => expect(applied).toBe(1), WAIT);
        await vi.waitFor(async () => expect(await broker.pending()).toBe(0), WAIT);
        expect([calls, dead]).toEqual([2, []]);
      });
    });

    it("a permanent failure is dead: onDead once, acknowledged, not redelivered", async () => {
      await run(3, async (broker, handler, dead) => {
        let calls = 0;
        await broker.start(handler, options(dead), async () => {
          calls++;
          throw new Declined("card declined");
        });
        await broker.publish("m-1", {});
        await vi.waitFor(() => expect(dead).toEqual(["m-1"]), WAIT);
        await vi.waitFor(async () => expect(await broker.pending()).toBe(0), WAIT);
        expect(calls).toBe(1);
      });
    });

    it("out of budget (maxRetries transient failures) is dead: onDead once, acknowledged", async () => {
      await run(2, async (broker, handler, dead) => {
        let calls = 0;
        await broker.start(handler, options(dead), async () => {
          calls++;
          throw new Error("timeout");
        });
        await broker.publish("m-1", {});
        await vi.waitFor(() => expect(dead).toEqual(["m-1"]), WAIT);
        await vi.waitFor(async () => expect(await broker.pending()).toBe(0), WAIT);
        expect(calls).toBe(2);
      });
    });

    it("concurrent deliveries of one id (two workers) run it once", async () => {
      await run(3, async (broker, handler, dead) => {
        const gate = deferred();
        let calls = 0;
        await broker.start(
          handler,
          options(dead),
          async () => {
            calls++;
            await gate.promise;
          },
          2,
        );
        await broker.publish("m-1", {});
        await broker.publish("m-1", {});
        await vi.waitFor(() => expect(calls).toBe(1), WAIT);
        // The second delivery meets the first in progress and is sent back; let it come round at least once.
        await new Promise((resolve) => setTimeout(resolve, 300));
        gate.resolve();
        await vi.waitFor(async () => expect(await broker.pending()).toBe(0), WAIT);
        expect([calls, dead]).toEqual([1, []]);
      });
    });

    it("a message without an id never runs and is not redelivered", async () => {
      await run(3, async (broker, handler, dead) => {
        let calls = 0;
        await broker.start(handler, options(dead), async () => calls++);
        await broker.publish(undefined, {});
        await broker.publish("m-2", {});
        await vi.waitFor(() => expect(calls).toBe(1), WAIT);
        await vi.waitFor(async () => expect(await broker.pending()).toBe(0), WAIT);
        expect(dead).toEqual([]);
      });
    });
  });
}
