// Renders the scenarios' figures as docs/reliability.md: one table, the command that produced it, and when.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ScenarioFigures } from "./figures";

export const SCENARIO_COUNT = 13;
export const REPORT_PATH = "docs/reliability.md";

export function readFigures(dir: string): ScenarioFigures[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => /^scenario-\d+\.json$/.test(file))
    .map((file) => JSON.parse(readFileSync(path.join(dir, file), "utf8")) as ScenarioFigures)
    .sort((a, b) => a.id - b.id);
}

export function renderTable(figures: ScenarioFigures[]): string {
  const header =
    "| # | scenario | requests sent | executions counted | duplicates served | 409s | 503s | double executions | p99 latency | duration | notes |\n" +
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |";
  const rows = figures.map(
    (f) =>
      `| ${f.id} | ${f.title} | ${f.requests} | ${f.executions} | ${f.duplicatesServed} | ${f.conflicts409} | ${f.unavailable503} | ${f.doubleExecutions} | ${f.p99Ms} ms | ${f.durationS} s | ${f.notes} |`,
  );
  return [header, ...rows].join("\n");
}

export function renderReport(figures: ScenarioFigures[], totalSeconds: number): string {
  return `# Reliability figures

Produced by \`npm run test:reliability\` (the suite in \`test/reliability/\`, config
\`vitest.reliability.config.ts\`) on ${new Date().toISOString()}, against real PostgreSQL
(\`DATABASE_URL\`) and Redis (\`REDIS_URL\`). The file is rewritten at the end of every full run;
a run of only some scenarios prints its figures and leaves this file alone.

Machine: Node ${process.version}, ${os.cpus().length} CPU cores, ${os.platform()} ${os.arch()}.
Whole run: ${Math.round(totalSeconds)} s. Soak duration: ${Number(process.env.RELIABILITY_SOAK_SECONDS ?? 60)} s (\`RELIABILITY_SOAK_SECONDS\`).

${renderTable(figures)}

What each scenario asserts (it fails otherwise, and then this file is not rewritten):
1. Four OS processes (Express, on port 0) share one PostgreSQL; every key's 20 sends leave at once,
   spread over them: each key executes exactly once, every answer is the stored 201 (same bytes) or
   409 \`REQUEST_IN_PROGRESS\` with \`Retry-After\`, no 5xx; afterwards every key replays from any process.
2. A worker process is SIGKILLed after its side effect: 409 until the lease is older than the
   recovery timeout (store clock), then recovery (run by two processes at once) frees the key once,
   the retry executes exactly once more, the retry counter counts each crash, the third poisons.
3. A worker is frozen (SIGSTOP) past its lease: recovery and a second process complete the key; the
   late completion is fenced off and the stored response stays the second one's; frozen before its
   side effect it never executes and its late failure spends no retry; a live execution that
   outlasts its TTL keeps its key.
4. A loopback proxy blackholes, then resets, the app's PostgreSQL link mid-load: every request sent
   during the cut gets 503 \`STORE_UNAVAILABLE\` within storeTimeoutMs + 2 s, no other 5xx, no hang,
   the process stays up; after the restore new keys execute once and earlier records replay byte for
   byte. Slowed past the timeout, a late insert no longer blocks its key.
5. A trigger makes the completion write fail: once (retried, recorded) and always (the caller gets
   its result, an error line \`UNRECORDED\`, the \`unrecorded\` counter, 409 until recovery).
6. The Redis link is blackholed, then refused, mid-load: every answer stays correct, the cache error
   counter rises, p99 stays within two cache timeouts + 2 s, and cache hits resume afterwards.
7. fast-check over HTTP on Express, Fastify and Hono: valid bare and quoted keys execute once and
   replay; empty, overlong, spaced, non-ASCII, malformed and repeated keys get 400
   \`IDEMPOTENCY_KEY_INVALID\`; control bytes get the server's 400; reordered and unicode bodies
   replay; bodies nested beyond the limit get 400 \`IDEMPOTENCY_PAYLOAD_INVALID\`; oversized ones 413 and
   malformed ones 400, each with a code; never a 5xx, no record left PROCESSING.
8. One process, both maintenance jobs running, mixed traffic (fresh keys, retries, conflicting
   reuses, concurrent duplicates, long executions) with 20 % injected transient failures: zero
   double executions, no 5xx but the injected ones, PROCESSING records bounded by what is in flight
   and none left, nothing live recovered, heap after GC stable.
9. RedisStore on a three-master Redis Cluster, four processes: every key runs once; with a master
   killed and restarted, answers are only 201, 409 or 503 and no key runs twice afterwards.
10. \`transaction: true\` routes across three processes: each order is written exactly once with its
   record; with the PostgreSQL link blackholed or reset mid-load, no record is left PROCESSING, every
   order has its SUCCESS record and vice versa, and retries run each key once.
11. A RabbitMQ consumer on \`consumeInTransaction\` is SIGKILLed inside a message's transaction; the
   broker redelivers its unacked messages to the next consumer: each message's effect (a row written
   with the inbox record) happens once, and redeliveries of completed ones answer duplicate.
12. Outbox -> RabbitMQ -> inbox: a relay SIGKILLed between the broker's confirm and marking its rows
   publishes them again (at least once, by design); the inbox runs each message once.
13. The operation calls a stand-in payment provider (which dedupes by Idempotency-Key, as Stripe does)
   in two recovery points (\`ctx.step\`), across four processes; each round SIGKILLs every process at
   a planned point (before or after the provider applied a call, or after both steps were recorded)
   with bystander requests in flight wherever they are. After recovery every request completes, each
   provider call took effect exactly once, a completed step was never called again (the planned
   crashes' call counts are exact), and every result replays. Scenario 2's doubles, closed.

Faults this suite found in the block, fixed there, each with a regression test of the same name in
\`registry/idempotency/regressions.test.ts\`:
- a stale execution's late transient failure does not count against the new owner's retry budget (scenario 3);
- a live execution that outlasts the TTL keeps its key: the heartbeat renews the record's expiry (scenario 3);
- a create that answers after the store timeout hands its key back, so the retry runs at once (scenario 4).
- a create whose insert committed but whose answer was lost frees its key, so the retry runs at once (scenario 4: such keys used to wait for recovery).

How to read it:
- **executions counted** are rows in a side-effect table that the protected operation itself writes
  (on the same PostgreSQL), so they count what really ran, not what the block reports.
- **double executions** are executions beyond the first per key. Where the scenario's notes say
  "by design", the second execution is the documented consequence of the fault being injected
  (a worker killed after its side effect, a stale worker that already ran, a success the store
  could not record); every other row must show 0, and the suite fails otherwise.
- **duplicates served** are answers replayed from a stored result; **409s** are in-progress,
  reused-key and failed-key answers; **503s** are \`STORE_UNAVAILABLE\` (or injected failures in the soak).
- Latencies are measured by the client over loopback on a shared 2-core machine: they show that
  nothing hangs, not how fast the block is (see \`bench/\` for that).
`;
}

/** Writes the report when every scenario produced figures; otherwise only prints what was measured. */
export function writeReport(dir: string, totalSeconds: number): string {
  const figures = readFigures(dir);
  if (figures.length === 0)
    return "reliability: no figures were produced (scenarios skipped?); docs/reliability.md left unchanged.";
  const failed = figures.filter((f) => !f.passed).map((f) => f.id);
  if (figures.length < SCENARIO_COUNT || failed.length > 0) {
    const why =
      failed.length > 0
        ? `scenario(s) ${failed.join(", ")} failed`
        : `${figures.length}/${SCENARIO_COUNT} scenarios ran`;
    return `reliability: ${why}, so ${REPORT_PATH} is left unchanged:\n${renderTable(figures)}`;
  }
  mkdirSync(path.dirname(REPORT_PATH), { recursive: true });
  writeFileSync(REPORT_PATH, renderReport(figures, totalSeconds));
  return `reliability: wrote ${REPORT_PATH}\n${renderTable(figures)}`;
}
