// The registry items behind added blocks, so `update` and `diff` compare against the registry they came from.
import type { Lock } from "../config/lock-file.js";

/**
 * `@registry/item` for each named block the lock says came from a configured registry (fetched again, with today's url and headers).
 *
 * @example
 * lockedItems(lock, ["audit-log", "idempotency"]); // ["@acme/audit-log"]
 */
export function lockedItems(lock: Lock, names: string[]): string[] {
  return names.flatMap((name) => {
    const origin = lock.blocks[name]?.registry;
    return origin ? [`${origin.registry}/${origin.item}`] : [];
  });
}
