// Per-request logging context on AsyncLocalStorage, so lines logged deep inside a request carry its id.
import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What every log line written inside `runWithLoggerContext` is stamped with.
 *
 * @example
 * const context: LoggerContext | undefined = getLoggerContext();
 */
export type LoggerContext = {
  readonly requestId: string;
};

const storage = new AsyncLocalStorage<LoggerContext>();

/**
 * Runs `fn` with `requestId` as the logging context. The context follows `fn` across awaits,
 * timers and callbacks, and two concurrent calls never see each other's id. Returns what `fn` returns.
 *
 * @example
 * await runWithLoggerContext(requestId, async () => {
 *   logger.info("charging card"); // {"requestId":"...","msg":"charging card"}
 *   await handler.execute(scope, charge);
 * });
 */
export function runWithLoggerContext<T>(requestId: string, fn: () => T): T {
  return storage.run(Object.freeze({ requestId }), fn);
}

/**
 * The context of the request being handled, or `undefined` outside `runWithLoggerContext`.
 *
 * @example
 * const requestId = getLoggerContext()?.requestId;
 * await fetch(billingUrl, { headers: requestId ? { "x-request-id": requestId } : {} });
 */
export function getLoggerContext(): LoggerContext | undefined {
  return storage.getStore();
}
