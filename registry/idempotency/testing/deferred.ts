// A promise you settle from outside, to hold an operation mid-flight without sleeping.

export type Deferred<T> = { promise: Promise<T>; resolve(value: T): void; reject(err: unknown): void };

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Settles to the error's `code` (or the error) instead of rejecting, for asserting many outcomes at once. */
export function outcome<T>(
  promise: Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; code: unknown; error: unknown }> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, code: (error as { code?: unknown })?.code, error }),
  );
}
