// Checks the targets against the measured figures (reported, never asserted).
import type { BenchResults, Target } from "./results";

const CLI_LIMIT_MS = 2_000;

export function evaluateTargets(results: Omit<BenchResults, "targets">): Target[] {
  const targets: Target[] = [];
  for (const row of results.overhead ?? []) {
    if (row.mode !== "fresh" || !row.vsFloor) continue;
    const { requestsPerSecond, p99 } = row.vsFloor;
    const client = row.route.backend === "postgres-prepared" ? "preparedStatements(pool)" : "plain pool";
    targets.push({
      target: `${row.framework} first request on PostgreSQL (${client}) >= 0.9x the floor's req/s, p99 <= 1.15x`,
      measured: `${requestsPerSecond}x req/s, ${p99}x p99`,
      met: requestsPerSecond >= 0.9 && p99 <= 1.15,
    });
  }
  for (const trip of results.roundTrips ?? []) {
    targets.push({ target: `round trips, ${trip.name}: ${trip.target}`, measured: `store ${trip.store}, cache ${trip.cache}`, met: trip.met });
  }
  for (const row of results.peers ?? []) {
    if (!row.vsBlocks) continue;
    targets.push({
      target: `ahead of ${row.label} (${row.mode}), against ${row.comparedWith}`,
      measured: `peer at ${row.vsBlocks.requestsPerSecond}x our req/s, ${row.vsBlocks.p99}x our p99`,
      met: row.vsBlocks.requestsPerSecond < 1,
    });
  }
  const sizes = results.jobs ?? [];
  const smallest = sizes[0];
  const largest = sizes.at(-1);
  if (smallest && largest && smallest !== largest) {
    for (const run of largest.runs) {
      const base = smallest.runs.find((r) => r.job === run.job);
      if (!base) continue;
      const ratio = Math.round((run.batchMs / base.batchMs) * 100) / 100;
      targets.push({
        target: `${run.job} batch at ${largest.rows} rows within 1.5x of ${smallest.rows}`,
        measured: `${run.batchMs} ms vs ${base.batchMs} ms (${ratio}x)`,
        met: ratio <= 1.5,
      });
    }
  }
  for (const timing of results.cli?.timings ?? []) {
    const ok = "medianMs" in timing;
    targets.push({
      target: `\`${results.cli?.command}\` (${timing.fixture}) < 2 s`,
      measured: ok ? `${timing.medianMs} ms` : `failed: ${timing.error}`,
      met: ok && timing.medianMs < CLI_LIMIT_MS,
    });
  }
  if (results.cli && !results.cli.available) targets.push({ target: "blocks add < 2 s", measured: results.cli.reason ?? "not run", met: false });
  return targets;
}
