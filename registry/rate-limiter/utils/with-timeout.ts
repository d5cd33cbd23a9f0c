// A time limit on store calls: a store that stops answering must not hang a request or keep the process up.

export class TimeoutError extends Error {
  override readonly name = "TimeoutError";
}

/**
 * Rejects with `TimeoutError` after `ms` (the timer never keeps the process alive). `onSettled`
 * runs when `promise` itself settles, in time or not: the limiter frees its in-flight slot there.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string, onSettled?: () => void): Promise<T> {
  // One promise and one timer: this runs on every request, so no race() or finally().
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TimeoutError(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref?.();
    promise.then(
      (value) => {
        clearTimeout(timer);
        onSettled?.();
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        onSettled?.();
        // Adopting the rejected promise passes on the store's own reason, whatever it is, untouched.
        resolve(promise);
      },
    );
  });
}
