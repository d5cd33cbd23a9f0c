// Load generator process: for each job it gets over IPC, primes replay keys, runs autocannon, sends the figures back.
// A job with `untilStopped` runs until the parent sends "stop", then drains: no connection sends another request,
// and the result comes once every request sent has been answered, so the server got exactly the requests counted.
import autocannon from "autocannon";
import { assertLoopback } from "../config";
import { LatencyRecorder } from "./latency-recorder";
import { keySequence, PAYMENT_BODY, replayKey, type LoadPlan } from "./load-plan";

/**
 * `amount`: send exactly that many requests (then `durationSeconds` only bounds how long the parent waits);
 * `untilStopped`: run until the parent's "stop" (`durationSeconds` bounds it too); `prime: false`: the replay keys
 * were primed by an earlier job of the same prefix.
 */
export type LoadJob = LoadPlan & {
  url: string;
  durationSeconds: number;
  connections: number;
  amount?: number | undefined;
  untilStopped?: boolean | undefined;
  prime?: boolean | undefined;
};

export type LoadResult = {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  total: number;
  /** Requests sent before the run to prime the replay keys (none for fresh keys). */
  primed: number;
  non2xx: number;
  errors: number;
};

const PRIME_CONCURRENCY = 8;
/** How often autocannon looks whether it should end (its default, 1 s, would keep a drained run waiting). */
const SAMPLE_MS = 20;

/** Each running job's connections, and whether "stop" came before they existed. */
type Running = { clients: DrainableClient[]; stopRequested: boolean };
const running = new Set<Running>();

/**
 * autocannon's client (9.x) ends once it has sent `responseMax` requests and the last is answered; raising no
 * new request after the one in flight is the drain autocannon has no option for.
 */
type DrainableClient = { reqsMade: number; responseMax: number | undefined };

function drain(job: Running): void {
  job.stopRequested = true;
  for (const client of job.clients) client.responseMax = Math.max(1, client.reqsMade);
}

async function prime(job: LoadJob): Promise<number> {
  if (job.mode === "fresh" || job.prime === false) return 0;
  let next = 0;
  const worker = async () => {
    while (next < job.replayKeys) {
      const key = replayKey(job, next++);
      const response = await fetch(job.url, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: PAYMENT_BODY,
      });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`priming ${key} got HTTP ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: PRIME_CONCURRENCY }, worker));
  return job.replayKeys;
}

async function run(job: LoadJob, state: Running): Promise<LoadResult> {
  assertLoopback(job.url);
  const primed = await prime(job);
  const nextKey = keySequence(job);
  const latencies = new LatencyRecorder();
  let instance: autocannon.Instance | undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: job.url,
        method: "POST",
        connections: job.connections,
        ...(job.amount && !job.untilStopped ? { amount: job.amount } : { duration: job.durationSeconds }),
        sampleInt: SAMPLE_MS,
        setupClient: (client: unknown) => void state.clients.push(client as DrainableClient),
        headers: { "content-type": "application/json" },
        body: PAYMENT_BODY,
        requests: [
          {
            setupRequest: (request) => ({ ...request, headers: { ...request.headers, "idempotency-key": nextKey() } }),
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
  instance?.on("response", (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
    if (statusCode >= 200 && statusCode < 300) latencies.record(responseTimeMs);
  });
  if (state.stopRequested) drain(state);
  const result = await done;
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: latencies.percentile(50),
    p99Ms: latencies.percentile(99),
    total: result.requests.total,
    primed,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

// Jobs run side by side; each answer carries its job's id. "stop" ends every running `untilStopped` job.
process.on("message", (message: { type?: string; id?: number; job?: LoadJob }) => {
  if (message?.type === "stop") running.forEach(drain);
  if (message?.type !== "job" || !message.job) return;
  const state: Running = { clients: [], stopRequested: false };
  running.add(state);
  run(message.job, state)
    .finally(() => running.delete(state))
    .then(
      (result) => process.send?.({ type: "result", id: message.id, result }),
      (err) => process.send?.({ type: "error", id: message.id, error: String(err?.stack ?? err) }),
    );
});
// Never outlive the parent.
process.on("disconnect", () => process.exit(0));
