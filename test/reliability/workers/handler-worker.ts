// A worker process driving IdempotencyHandler.execute on IPC commands, for crash, stale-lease and lost-write scenarios.
import { deferred, type Deferred } from "../../../registry/idempotency/testing/deferred";
import type { ExecuteCommand } from "./worker-config";
import { startRuntime } from "./worker-runtime";

type Command =
  | ExecuteCommand
  | { type: "release"; id: number; key: string }
  | { type: "recover"; id: number; timeoutInMs: number }
  | { type: "counters"; id: number };

const runtime = await startRuntime();
const { handler, config } = runtime;
const holds = new Map<string, Deferred<void>>();
const send = (message: Record<string, unknown>) => process.send?.(message);

async function execute({ key, payload, hold = "none" }: ExecuteCommand) {
  const scope = { operation: "payments:create", userId: "u_1", key, payload };
  return handler.execute(scope, async ({ signal }) => {
    const gate = deferred();
    holds.set(key, gate);
    send({ type: "event", event: "started", key });
    if (hold === "before-effect") await gate.promise;
    signal.throwIfAborted();
    const execution = await runtime.recordExecution(key);
    send({ type: "event", event: "executed", key });
    if (hold === "after-effect") await gate.promise;
    return { key, worker: config.workerId, execution };
  });
}

async function handle(command: Command): Promise<unknown> {
  switch (command.type) {
    case "execute":
      return execute(command);
    case "release":
      holds.get(command.key)?.resolve();
      return true;
    case "recover":
      return handler.recoverStuckRecords({ timeoutInMs: command.timeoutInMs, limit: 100 });
    case "counters":
      return runtime.counters;
  }
}

process.on("message", (command: Command) => {
  handle(command).then(
    (value) => send({ type: "reply", id: command.id, ok: true, value }),
    (err: { code?: string; message?: string }) =>
      send({ type: "reply", id: command.id, ok: false, code: err?.code, message: String(err?.message ?? err) }),
  );
});
process.on("SIGTERM", () => void runtime.close().finally(() => process.exit(0)));
runtime.announceReady();
