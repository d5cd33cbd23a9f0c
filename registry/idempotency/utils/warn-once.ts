// Developer warnings about how the block is wired, each printed once per process however often it happens.

const warned = new Set<string>();

/**
 * Emits a Node process warning the first time `message` is seen. Process warnings, not the
 * handler's logger, because they are about how the code is wired, and they show even when no
 * logger was configured (`node --no-warnings` silences them).
 *
 * @example
 * warnOnce("idempotency: route POST /payments has no getUserId");
 */
export function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  process.emitWarning(message, { code: "IDEMPOTENCY_SETUP" });
}
