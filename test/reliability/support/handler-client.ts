// Sends execute commands to handler workers and turns each answer into an HTTP-like outcome for the figures.
import { DEFAULT_ERROR_STATUS, type IdempotencyErrorCode } from "../../../registry/idempotency/errors";
import type { ExecuteCommand } from "../workers/worker-config";
import type { FiguresCollector } from "./figures";
import { WorkerExitedError, type WorkerProcess } from "./processes";

/** Status 0: the worker died before answering (the client saw its connection drop). */
export type Outcome = { status: number; code?: string; response?: unknown; replayed: boolean; ms: number };

export async function execute(
  worker: WorkerProcess,
  figures: FiguresCollector,
  command: Omit<ExecuteCommand, "type" | "id">,
): Promise<Outcome> {
  const started = performance.now();
  let outcome: Omit<Outcome, "ms">;
  try {
    const reply = await worker.request({ type: "execute", ...command });
    if (reply.ok) {
      const { response, replayed } = reply.value as { response: unknown; replayed: boolean };
      outcome = { status: 200, response, replayed };
    } else {
      const status = DEFAULT_ERROR_STATUS[reply.code as IdempotencyErrorCode] ?? 500;
      outcome = { status, code: reply.code ?? reply.message, replayed: false };
    }
  } catch (err) {
    if (!(err instanceof WorkerExitedError)) throw err;
    outcome = { status: 0, code: "WORKER_EXITED", replayed: false };
  }
  const ms = performance.now() - started;
  figures.record(outcome.status, ms, outcome.replayed);
  return { ...outcome, ms };
}

export async function recover(
  worker: WorkerProcess,
  timeoutInMs: number,
): Promise<{ released: number; poisoned: number }> {
  const reply = await worker.request({ type: "recover", timeoutInMs });
  if (!reply.ok) throw new Error(`recoverStuckRecords failed: ${reply.code ?? reply.message}`);
  return reply.value as { released: number; poisoned: number };
}

export async function counters(worker: WorkerProcess): Promise<Record<string, number>> {
  const reply = await worker.request({ type: "counters" });
  return reply.ok ? (reply.value as Record<string, number>) : {};
}
