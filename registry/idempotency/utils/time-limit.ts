// Time limits and waits: a store or cache that stops answering must not hang a request or keep the process up.
// One source for every block (the idempotency handler and the rate limiter vendor identical copies).

const SETTLED = Promise.resolve();

export class TimeoutError extends Error {
  override readonly name = "TimeoutError";
}

/**
 * One call under its own limit: rejects with `TimeoutError` after `ms` (the timer never keeps the
 * process alive). For calls with different limits (a store call, a cache call, a transaction); calls
 * that all share one fixed limit on a hot path take `TimeLimit` below. A promise that
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
    // Armed from a reaction queued after the promise's own: a promise settled already settles first and arms
    // no timer. (`queueMicrotask` would do the same at the cost of an AsyncResource and a bound function.)
    void SETTLED.then(() => {
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

/**
 * What `TimeLimit.watch` tells about one call: `answered` with its value or `failed` with its own
 * reason when it settles in time, else `failed` with a TimeoutError; `settled` when it settles, in time or not.
 */
export type Watcher<T> = {
  answered(value: T): void;
  failed(reason: unknown): void;
  settled?: (() => void) | undefined;
};

/** One call still waiting, in a list in the order the calls started (which is the order they are due). */
type Waiting = { watcher: Watcher<never>; tick: number; prev: Waiting | undefined; next: Waiting | undefined };

/**
 * Bounds promises by one fixed limit with one timer for all of them: a timer per call (set, unref,
 * clear: several calls into the runtime) cost more than the rest of a decision. Time is counted in
 * ticks of a sixteenth of the limit (at least 1 ms), by the timer alone, so fake timers drive it like
 * any other: a call gives up after `ms` and at most two ticks more (an eighth), never sooner. The
 * timer runs only while calls wait, and never keeps the process alive.
 *
 * @example
 * const limit = new TimeLimit(200, "rate-limit store");
 * const answer = await limit.bound(store.take(key, rate), () => release(key)); // TimeoutError 200-216 ms after the call
 */
export class TimeLimit {
  private readonly ms: number;
  private readonly what: string;
  private readonly tickMs: number;
  /** A call started just before a tick has aged almost nothing at it: one tick more than the limit holds. */
  private readonly dueAfterTicks: number;
  private ticks = 0;
  private first: Waiting | undefined;
  private last: Waiting | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(ms: number, what: string) {
    this.ms = ms;
    this.what = what;
    this.tickMs = Math.max(1, Math.floor(ms / 16));
    this.dueAfterTicks = Math.ceil(ms / this.tickMs) + 1;
  }

  /**
   * `promise`, or a `TimeoutError` once the limit has passed. `onSettled` runs when `promise` itself
   * settles, in time or not: the limiter frees its in-flight slot there.
   */
  bound<T>(promise: Promise<T>, onSettled?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.watch<T>(promise, { answered: resolve, failed: reject, settled: onSettled });
    });
  }

  /**
   * `bound` for a caller that settles a promise of its own (one promise and one turn of the
   * microtask queue less per call): exactly one of `watcher.answered` and `watcher.failed` runs.
   *
   * @example
   * limit.watch(store.take(key, rate), { answered: resolve, failed: reject, settled: () => release(key) });
   */
  watch<T>(promise: Promise<T>, watcher: Watcher<T>): void {
    const waiting: Waiting = { watcher, tick: this.ticks, prev: this.last, next: undefined };
    if (this.last) this.last.next = waiting;
    else this.first = waiting;
    this.last = waiting;
    if (this.timer === undefined) this.start();
    promise.then(
      (value) => {
        if (this.settle(waiting)) watcher.answered(value);
      },
      (reason: unknown) => {
        // The store's own reason, whatever it is, passed on untouched.
        if (this.settle(waiting)) watcher.failed(reason);
      },
    );
  }

  /** A call's promise settled: unlinks it and runs its `settled`; true when it was still waiting (in time). */
  private settle(waiting: Waiting): boolean {
    const inTime = waiting.tick >= 0;
    this.remove(waiting);
    waiting.watcher.settled?.();
    return inTime;
  }

  /** Unlinks a call (answered, or timed out); a second removal does nothing. */
  private remove(waiting: Waiting): void {
    if (waiting.tick < 0) return;
    if (waiting.prev) waiting.prev.next = waiting.next;
    else this.first = waiting.next;
    if (waiting.next) waiting.next.prev = waiting.prev;
    else this.last = waiting.prev;
    waiting.prev = waiting.next = undefined;
    waiting.tick = -1;
  }

  private start(): void {
    this.timer = setInterval(() => this.tick(), this.tickMs);
    this.timer.unref?.();
  }

  /** Calls that have waited the whole limit time out, oldest first; the timer stops when none waits. */
  private tick(): void {
    this.ticks++;
    let due = this.first;
    while (due && this.ticks - due.tick >= this.dueAfterTicks) {
      const { watcher } = due;
      this.remove(due);
      watcher.failed(new TimeoutError(`${this.what} did not answer within ${this.ms} ms`));
      due = this.first;
    }
    if (this.first === undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
