// Runs a bounded number of tasks with bounded concurrency, and stops starting new ones at a deadline.

/**
 * Calls `task(i)` for i in [0, count), at most `concurrency` at once, never starting one after
 * `deadlineMs` has passed. Resolves with how many were started.
 */
export async function runBounded(
  count: number,
  concurrency: number,
  deadlineMs: number,
  task: (i: number) => Promise<void>,
): Promise<number> {
  const deadline = performance.now() + deadlineMs;
  let next = 0;
  const lane = async () => {
    while (next < count && performance.now() < deadline) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return next;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
