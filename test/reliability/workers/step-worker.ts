// A worker whose operation calls a payment provider in two recovery points (ctx.step), on IPC commands; it may be SIGKILLed anywhere.
import type { ExecuteCommand } from "./worker-config";
import { startRuntime } from "./worker-runtime";

type Command = ExecuteCommand | { type: "recover"; id: number; timeoutInMs: number };

const runtime = await startRuntime();
const { handler, config } = runtime;
const downstreamUrl = config.downstreamUrl ?? "";
const send = (message: Record<string, unknown>) => process.send?.(message);

/** A provider call with the step's key as its Idempotency-Key, as a Stripe client sends it. */
async function call(path: string, stepKey: string, requestKey: string): Promise<{ id: string }> {
  const response = await fetch(`${downstreamUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": stepKey, "x-caller-pid": String(process.pid) },
    body: JSON.stringify({ requestKey }),
  });
  if (!response.ok) throw new Error(`provider answered ${response.status}`);
  return (await response.json()) as { id: string };
}

async function execute({ key, payload, killAfterSteps = false }: ExecuteCommand) {
  const scope = { operation: "payments:create", userId: "u_1", key, payload };
  return handler.execute(scope, async ({ step }) => {
    const charge = await step("charge", (stepKey) => call("/charges", stepKey, key));
    const receipt = await step("receipt", (stepKey) => call("/receipts", stepKey, key));
    // After both steps are recorded and before the result is: the retry must replay both.
    // (stdout is a pipe, written synchronously: the line reaches the test before the kill.)
    if (killAfterSteps) {
      process.stdout.write(`${JSON.stringify({ level: "info", msg: "killed after steps", key })}\n`);
      process.kill(process.pid, "SIGKILL");
    }
    return { key, charge: charge.id, receipt: receipt.id, worker: config.workerId };
  });
}

async function handle(command: Command): Promise<unknown> {
  return command.type === "execute"
    ? execute(command)
    : handler.recoverStuckRecords({ timeoutInMs: command.timeoutInMs, limit: 1_000 });
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
