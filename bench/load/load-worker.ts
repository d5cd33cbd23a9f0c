// Load generator process: for each job it gets over IPC, primes replay keys, runs autocannon, sends the figures back.
import autocannon from "autocannon";
import { assertLoopback } from "../config";
import { LatencyRecorder } from "./latency-recorder";
import { keySequence, PAYMENT_BODY, replayKey, type LoadPlan } from "./load-plan";

export type LoadJob = LoadPlan & { url: string; durationSeconds: number; connections: number };

export type LoadResult = {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  total: number;
  non2xx: number;
  errors: number;
};

const PRIME_CONCURRENCY = 8;

async function prime(job: LoadJob): Promise<void> {
  if (job.mode === "fresh") return;
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
}

async function run(job: LoadJob): Promise<LoadResult> {
  assertLoopback(job.url);
  await prime(job);
  const nextKey = keySequence(job);
  const latencies = new LatencyRecorder();
  let instance: autocannon.Instance | undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: job.url,
        method: "POST",
        connections: job.connections,
        duration: job.durationSeconds,
        headers: { "content-type": "application/json" },
        body: PAYMENT_BODY,
        requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, "idempotency-key": nextKey() } }) }],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
  instance?.on("response", (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
    if (statusCode >= 200 && statusCode < 300) latencies.record(responseTimeMs);
  });
  const result = await done;
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: latencies.percentile(50),
    p99Ms: latencies.percentile(99),
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

// One job at a time: the parent waits for each answer before sending the next.
process.on("message", (message: { type?: string; job?: LoadJob }) => {
  if (message?.type !== "job" || !message.job) return;
  run(message.job).then(
    (result) => process.send?.({ type: "result", result }),
    (err) => process.send?.({ type: "error", error: String(err?.stack ?? err) }),
  );
});
// Never outlive the parent.
process.on("disconnect", () => process.exit(0));
