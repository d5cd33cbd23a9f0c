// Bounds a promise in time, so a store or cache that stops answering cannot hang a request.

export class TimeoutError extends Error {
  override readonly name = "TimeoutError";
}

/** Rejects with `TimeoutError` after `ms` (the timer never keeps the process alive). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  if (!(ms > 0) || ms === Infinity) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
