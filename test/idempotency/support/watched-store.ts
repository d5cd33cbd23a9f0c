// A store seen through a wrapper: counts its `get` calls, tells the test when one happens, and can make them fail or hang.
import type { IdempotencyScope, IdempotencyStore } from "@/blocks/idempotency/types";

export type WatchedStore = {
  store: IdempotencyStore;
  /** `get` calls so far. */
  readonly gets: number;
  /** Resolves once `get` has been called `count` times in all. */
  getsReached(count: number): Promise<void>;
  /** From now on `get` rejects (`"fail"`), never answers (`"hang"`), or works again (`undefined`). */
  breakGet(mode: "fail" | "hang" | undefined): void;
};

/** Wraps every method of `inner` (bound, so a class store keeps its `this`); only `get` is watched. */
export function watchedStore(inner: IdempotencyStore): WatchedStore {
  let gets = 0;
  let broken: "fail" | "hang" | undefined;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const get = (scope: IdempotencyScope) => {
    gets++;
    for (const waiter of waiters.filter((w) => w.count <= gets)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    if (broken === "fail") return Promise.reject(new Error("connection refused"));
    if (broken === "hang") return new Promise<never>(() => {});
    return inner.get(scope);
  };
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === "get") return get;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    store,
    get gets() {
      return gets;
    },
    getsReached: (count) =>
      gets >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    breakGet: (mode) => void (broken = mode),
  };
}

/**
 * The most polls a wait of `ms` can make: each pause is at least half of a delay that starts at
 * 10 ms and doubles to 250 ms, and one poll follows each pause (the last one at the deadline).
 */
export function maxPollsWithin(ms: number): number {
  let polls = 0;
  let elapsed = 0;
  let delay = 10;
  while (elapsed < ms) {
    elapsed += delay / 2;
    polls++;
    delay = Math.min(delay * 2, 250);
  }
  return polls + 1;
}
