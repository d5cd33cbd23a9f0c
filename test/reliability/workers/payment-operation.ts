// The protected operation every HTTP worker serves: an injected failure, or one side-effect row and a response.
import type { WorkerRuntime } from "./worker-runtime";

/** What a test can ask of one execution, inside the request body (so retries ask the same). */
export type PaymentBody = { amount?: unknown; holdMs?: unknown };

/** Thrown before any side effect, for the share of executions the soak fails on purpose. */
export class InjectedFailure extends Error {
  override readonly name = "InjectedFailure";
}

export function paymentOperation(runtime: WorkerRuntime) {
  const failureRate = runtime.config.failureRate ?? 0;
  return async function charge(
    key: string,
    userId: string,
    body: PaymentBody,
  ): Promise<{ status: number; body: unknown }> {
    if (failureRate > 0 && Math.random() < failureRate)
      throw new InjectedFailure("injected transient failure (payment provider timeout)");
    const execution = await runtime.recordExecution(key, userId);
    const holdMs = typeof body?.holdMs === "number" ? Math.min(body.holdMs, 10_000) : 0;
    if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
    return {
      status: 201,
      body: { id: `ch_${execution}`, key, user: userId, worker: runtime.config.workerId, amount: body?.amount ?? null },
    };
  };
}
