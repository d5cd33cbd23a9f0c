// Run as a bundle by bench/profile-execute.ts under `node --cpu-prof`: `execute` on MemoryStore in a loop,
// with nothing else in the process, so its profile shows the shared flow's own frames.
// `node execute-loop.mjs fresh|replay [calls]`.
import { IdempotencyHandler } from "@/blocks/idempotency";
import { MemoryStore } from "@/blocks/idempotency/testing/memory-store";
import { hashPayload } from "@/blocks/idempotency/fingerprint";
import { PAYMENT_BODY } from "../load/load-plan";

const [mode = "fresh", count = "200000"] = process.argv.slice(2);
if (mode !== "fresh" && mode !== "replay") throw new Error(`mode must be fresh or replay, got "${mode}"`);
const calls = Number(count);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const handler = new IdempotencyHandler(new MemoryStore(), undefined, { logger: quiet });
const requestHash = hashPayload(JSON.parse(PAYMENT_BODY));
const response = { status: 201, headers: { "content-type": "application/json" }, body: { id: "pay_1", amount: 1250 } };
const scope = (i: number) => ({ operation: "POST /payments", userId: "u_bench", key: `k-${i}`, requestHash });
const replayKeys = 200;

async function main(): Promise<void> {
  if (mode === "replay") for (let i = 0; i < replayKeys; i++) await handler.execute(scope(i), async () => response);
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    await handler.execute(scope(mode === "replay" ? i % replayKeys : replayKeys + i), async () => response);
  }
  const us = Number(process.hrtime.bigint() - started) / calls / 1000;
  // CPU time too: on a shared machine the wall clock also counts the time other processes ran.
  const used = process.cpuUsage(cpu);
  const cpuUs = (used.user + used.system) / calls;
  console.log(
    JSON.stringify({ mode, calls, usPerCall: Math.round(us * 100) / 100, cpuUsPerCall: Math.round(cpuUs * 100) / 100 }),
  );
}

void main();
