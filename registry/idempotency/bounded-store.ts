// Every store call bounded by the store timeout, and every failure of one counted: written once, used by every path.
import type { Observer } from "./observer";
import type { IdempotencyStore } from "./types";
import { withTimeout } from "./utils/time-limit";

/** A store method, as the `method` label of `idempotency_store_errors_total` names it. */
export type StoreMethod = Exclude<keyof IdempotencyStore, "table"> | "transaction";

/**
 * The store as the handler reaches it: a call slower than `timeoutMs` rejects with TimeoutError,
 * and a call that fails or times out counts once under `storeErrors{method}`. The caller decides
 * what the failure means (and logs it); it never counts it again.
 *
 * @example
 * const held = await bounded.call("heartbeat", (store) => store.heartbeat(scope, token, ttlMs));
 */
export class BoundedStore {
  readonly store: IdempotencyStore;
  readonly timeoutMs: number;
  private readonly observer: Observer;

  constructor(store: IdempotencyStore, timeoutMs: number, observer: Observer) {
    this.store = store;
    this.timeoutMs = timeoutMs;
    this.observer = observer;
  }

  /** `timeoutMs`: a longer bound for a call that also waits for a lock (a transaction). */
  call<T>(method: StoreMethod, run: (store: IdempotencyStore) => Promise<T>, timeoutMs = this.timeoutMs): Promise<T> {
    let answer: Promise<T>;
    try {
      answer = run(this.store);
    } catch (err) {
      // A store method that throws before returning its promise fails the same way as one that rejects.
      this.failed(method);
      return Promise.reject(
        err instanceof Error ? err : new Error(`store.${method} threw ${String(err)}`, { cause: err }),
      );
    }
    return withTimeout(answer, timeoutMs, `store.${method}`, () => this.failed(method));
  }

  /** Counts a failure of a call bounded elsewhere (a transaction with its own deadline). */
  failed(method: StoreMethod): void {
    this.observer.count("storeErrors", { method });
  }
}
