// Time limits and waits: a store or cache that stops answering must not hang a request or keep the process up.

export class TimeoutError extends Error {
  override readonly name = "TimeoutError";
}

/**
 * Rejects with `TimeoutError` after `ms` (the timer never keeps the process alive). A promise that
 * is already settled (an in-process store such as MemoryStore) gets no timer at all: its reaction
 * runs before the microtask that would arm one. `onFailure` runs once if it rejects or times out.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string, onFailure?: () => void): Promise<T> {
  if (!(ms > 0) || ms === Infinity) {
    if (!onFailure) return promise;
    return promise.catch((err: unknown) => {
      onFailure();
      throw err;
    });
  }
  // One promise and at most one timer: this runs on every store and cache call, so no race() or finally().
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    promise.then(
      (value) => {
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        resolve(value);
      },
      () => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        onFailure?.();
        // Adopting the rejected promise passes on the store's own reason, whatever it is, untouched.
        resolve(promise);
      },
    );
    queueMicrotask(() => {
      if (settled) return;
      timer = setTimeout(() => {
        settled = true;
        onFailure?.();
        reject(new TimeoutError(`${what} did not answer within ${ms} ms`));
      }, ms);
      timer.unref?.();
    });
  });
}

/** Resolves after `ms`; the timer never keeps the process alive. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}
