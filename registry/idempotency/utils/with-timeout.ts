// Bounds a promise in time, so a store or cache that stops answering cannot hang a request.

export class TimeoutError extends Error {
  override readonly name = "TimeoutError";
}

/** Rejects with `TimeoutError` after `ms` (the timer never keeps the process alive). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  if (!(ms > 0) || ms === Infinity) return promise;
  // One promise and one timer: this runs on every store and cache call, so no race() or finally().
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TimeoutError(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref?.();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
