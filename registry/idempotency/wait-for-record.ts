// A duplicate that waits for the first attempt of its key: polls the record until it settles, the key frees, or time runs out.
import { randomUUID } from "node:crypto";
import type { Observer } from "./observer";
import type { CreateResult, IdempotencyRecord, IdempotencyScope, StepResults } from "./types";

/** The longest a duplicate may be held: past a few minutes the client (or a proxy) has long given up. */
export const MAX_WAIT_MS = 300_000;
/** Polls start fast (most operations finish in tens of milliseconds) and back off to this. */
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 250;

/** How a wait ended, as `idempotency_waits_total{outcome}` labels it. */
export type WaitOutcome =
  "replayed" | "failed" | "executed" | "in_progress" | "aborted" | "key_reused" | "store_unavailable";

/**
 * What the wait may do to the key. Both reject with STORE_UNAVAILABLE (an IdempotencyError) when
 * the store fails or times out: a waiter cannot tell a settled key from a store that is down.
 */
export type WaitAccess = {
  get(): Promise<IdempotencyRecord | undefined>;
  create(token: string): Promise<CreateResult>;
};

/** A record to answer from (settled, or still PROCESSING when time ran out), or the key, created under `token`. */
export type Waited = { record: IdempotencyRecord } | { token: string; steps: StepResults | undefined };

export type WaitRequest = {
  scope: IdempotencyScope;
  requestHash: string;
  /** The PROCESSING record `create` answered with. */
  record: IdempotencyRecord;
  waitMs: number;
  /** The caller went away (its HTTP client disconnected): stop polling and answer in-progress. */
  signal?: AbortSignal | undefined;
};

/**
 * Waits at most `waitMs` for the first attempt of a key. A settled record (SUCCESS, FAILED) is
 * returned to be answered as any duplicate is. A key that frees (the first attempt failed
 * transiently, or recovery took it back) is created again, as a retry would: the caller that
 * wins runs the operation, the others wait on the winner. Between polls nothing is held, no
 * connection and no lock, so many waiters on one key cost the store one `get` per poll each.
 *
 * @example
 * const waited = await waitForFirstAttempt(access, observer, { scope, requestHash, record, waitMs: 2_000 });
 * if ("token" in waited) return run(waited.token); // the key was freed and is ours now
 */
export async function waitForFirstAttempt(
  access: WaitAccess,
  observer: Observer,
  request: WaitRequest,
  random = Math.random,
): Promise<Waited> {
  const started = Date.now();
  const deadline = started + request.waitMs;
  let waited: Waited | undefined;
  try {
    waited = await waitUntil(access, request, deadline, random);
    return waited;
  } finally {
    const outcome = waited === undefined ? "store_unavailable" : outcomeOf(waited, request);
    observer.record("waited", request.scope, { outcome, waitedMs: Date.now() - started });
    observer.count("waits", { operation: request.scope.operation, outcome });
  }
}

async function waitUntil(
  access: WaitAccess,
  request: WaitRequest,
  deadline: number,
  random: () => number,
): Promise<Waited> {
  let record = request.record;
  for (;;) {
    const seen = await pollWhileProcessing(access, record, deadline, request.signal, random);
    if (seen !== undefined) return { record: seen };
    // Nobody is left to answer: leave the key to the client's own retry.
    if (request.signal?.aborted) return { record };
    // Past the deadline too: the key is free, and taking it is what the client's retry would do.
    const token = randomUUID();
    const created = await access.create(token);
    if (created.status === "CREATED") return { token, steps: created.steps };
    if (created.record.status !== "PROCESSING" || created.record.requestHash !== request.requestHash)
      return { record: created.record };
    record = created.record;
  }
}

/** Polls with jittered backoff, capped by the time left: the record once it is not PROCESSING (undefined: gone). */
async function pollWhileProcessing(
  access: WaitAccess,
  first: IdempotencyRecord,
  deadline: number,
  signal: AbortSignal | undefined,
  random: () => number,
): Promise<IdempotencyRecord | undefined> {
  let record: IdempotencyRecord | undefined = first;
  let delay = FIRST_POLL_MS;
  while (record?.status === "PROCESSING") {
    const remaining = deadline - Date.now();
    if (remaining <= 0 || signal?.aborted) return record;
    // Half the delay plus a random half: waiters that arrived together do not poll in lockstep.
    await pause(Math.min(remaining, delay / 2 + (random() * delay) / 2), signal);
    if (signal?.aborted) return record;
    record = await access.get();
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
  return record;
}

function outcomeOf(waited: Waited, request: WaitRequest): WaitOutcome {
  if ("token" in waited) return "executed";
  const { record } = waited;
  if (record.requestHash !== request.requestHash) return "key_reused";
  if (record.status === "SUCCESS") return "replayed";
  if (record.status === "FAILED") return "failed";
  return request.signal?.aborted ? "aborted" : "in_progress";
}

/** Resolves after `ms`, or as soon as `signal` aborts; the timer never keeps the process alive. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref?.();
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * `waitMs` as a handler default, a call's or a route's option: 0 (answer REQUEST_IN_PROGRESS at
 * once) up to MAX_WAIT_MS.
 */
export function checkWaitMs(value: number, where = "waitMs"): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_WAIT_MS) {
    throw new RangeError(
      `idempotency: \`${where}\` must be a number of milliseconds from 0 to ${MAX_WAIT_MS}, got ${String(value)}.`,
    );
  }
  return value;
}
