// Renders the results as bench/results/latest.md: one table per scenario, then the targets.
import { LOAD_MODES } from "../load/load-plan";
import type { Ratio } from "../support/alternate";
import type { PeerRow } from "../scenarios/peers";
import type { CpuRow } from "../scenarios/server-cpu";
import type { PeerComparison } from "../support/peer-comparison";
import { WARMUP_REQUESTS } from "../support/measure-cpu";
import type { TransactionalRow } from "../scenarios/transactional";
import type { BenchResults } from "./results";
import { signedMicros } from "./stats";

type Cell = string | number | undefined;

function table(header: string[], rows: Cell[][]): string {
  const line = (cells: Cell[]) => `| ${cells.map((cell) => (cell === undefined ? "" : String(cell))).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

const x = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? "" : `${value}x`);
const ratioCells = (ratio?: Ratio) => [x(ratio?.requestsPerSecond), x(ratio?.p50), x(ratio?.p99)];
const failures = (row: { non2xx: number; errors: number }) =>
  row.non2xx + row.errors ? `${row.non2xx} / ${row.errors}` : "0";

function meta(results: BenchResults): string {
  const { meta: m } = results;
  return [
    `Command: \`${m.command}\` — ran ${m.durationSeconds} s, started ${m.startedAt}.`,
    `Node ${m.node}, ${m.cpus} CPUs shared with PostgreSQL, Redis, the load generator and other work; load average ${m.loadAverageAtStart.join(" / ")} at start, ${m.loadAverageAtEnd.join(" / ")} at the end.`,
    `Settings: ${Object.entries(m.settings)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(", ")}.`,
    "Each figure is the median over rounds. Server-CPU groups are loaded all at once in each round (one window of wall time, drained before CPU is read), so the host's other load hits every server of a group alike; the rate limiter's Redis- and PostgreSQL-bound groups run one server after another, alternating A B C, then C B A. Every ratio is the median of per-round ratios between two servers of one round, so it holds better than the absolute figures on a noisy machine. Latencies are in ms; `fails` counts non-2xx responses / connection errors.",
  ].join("\n\n");
}

function overhead(results: BenchResults): string {
  const rows = (results.overhead ?? []).map((row) => [
    row.framework,
    row.label.replace(`${row.framework} `, ""),
    LOAD_MODES[row.mode],
    row.requestsPerSecond,
    row.p50Ms,
    row.p99Ms,
    ...ratioCells(row.vsBare),
    failures(row),
  ]);
  return table(
    ["Framework", "Route", "Scenario", "req/s", "p50", "p99", "req/s x bare", "p50 x bare", "p99 x bare", "fails"],
    rows,
  );
}

function floor(results: BenchResults): string {
  const rows = (results.overhead ?? [])
    .filter((row) => row.vsFloor)
    .map((row) => [LOAD_MODES[row.mode], row.label, row.requestsPerSecond, row.p99Ms, ...ratioCells(row.vsFloor)]);
  return table(["Scenario", "Ours", "req/s", "p99", "req/s x floor", "p50 x floor", "p99 x floor"], rows);
}

const us = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? "" : signedMicros(value));

function cpuTable(list: CpuRow[]): string {
  const rows = list.map((row) => [
    row.framework,
    row.label.replace(`${row.framework} `, ""),
    LOAD_MODES[row.mode],
    row.usPerRequest,
    us(row.addedUs),
    row.roundsUs.join(", "),
    failures(row),
  ]);
  return table(["Framework", "Route", "Scenario", "µs per request", "added vs bare", "rounds µs", "fails"], rows);
}

/** Ours against a peer: each one's added CPU, and the per-round difference between the two with its spread. */
function comparisonTable(list: PeerComparison[]): string {
  return table(
    [
      "Framework",
      "Ours",
      "Peer",
      "ours added",
      "peer added",
      "ratio",
      "ours - peer (median)",
      "quartiles",
      "range",
      "rounds",
    ],
    list.map((c) => [
      c.framework,
      c.ours.replace(`${c.framework} `, ""),
      c.peer.replace(`${c.framework} `, ""),
      us(c.oursAddedUs),
      us(c.peerAddedUs),
      x(c.ratio),
      us(c.differenceUs),
      c.quartilesUs.join(" .. "),
      c.rangeUs.join(" .. "),
      `${c.rounds} x ${c.requestsPerRound}`,
    ]),
  );
}

const PAIRED_METHOD =
  "Against a peer, the servers run as a group of their own (bare, ours, the peer) with twice as many requests per round (the rate limiter's Redis-bound groups in adjacent turns, the error handler's in one window); the verdict is the median of the per-round differences ours - peer (µs per request), which the bare route's own noise does not enter, shown with their quartiles and range.";

const cpuMethod = (list: CpuRow[]) =>
  `Server process user + system CPU (from \`/proc\`, its threads' run time to the nanosecond) over ${list[0]?.requestsPerRound} requests per round after ${WARMUP_REQUESTS} unmeasured; \`added\` is the median of per-round differences to the bare route of the same framework (and group).`;

function cpu(results: BenchResults): string {
  const list = results.cpu ?? [];
  return [
    `${cpuMethod(list)} MemoryStore. On fetch, "capture" is \`withIdempotency(handler, options, route)\` (the route returns a \`Response\`); NestJS has one style, \`@Idempotent()\` with its interceptor.`,
    cpuTable(list),
    ...coreCost(results),
  ].join("\n\n");
}

function coreCost(results: BenchResults): string[] {
  const rows = results.coreCost;
  if (!rows?.length) return [];
  return [
    `In process, without HTTP (one bundle run as ${String(results.meta.settings.rounds ?? 1)} processes, each taking the best of 5 runs of 50 000 calls; each row, ratios included, is the median over the processes): the flow every adapter shares, on MemoryStore with a wrapper-style route that reads its signal and with one that does not, and the work the contract itself requires of every request (the AbortSignal only of a route that reads it: the contract makes one then, and only then). The HTTP rows above add the framework's handling of a second code path, the garbage of both, and the kernel's cost of waking the load generator for each response.`,
    table(
      ["Work", "µs"],
      rows.map((row) => [row.name, row.us]),
    ),
  ];
}

function rateLimiter(results: BenchResults): string {
  const r = results.rateLimiter;
  if (!r) return "";
  return [
    `${cpuMethod(r.cpu)} Express (and Fastify) route behind \`rateLimit()\`, and behind rate-limiter-flexible (Express) and @fastify/rate-limit (Fastify) on Redis, with a quota nobody reaches (every request takes the allowed path), callers rotating over 1 000 users. ${PAIRED_METHOD}`,
    ...groupTables(r.cpu),
    comparisonTable(r.comparisons ?? []),
    `The shared HTTP step alone (key, memory decision, headers), in process: ${r.inProcessUs} µs CPU per request.`,
    table(
      [
        "Store",
        "allowed decisions",
        "round trips",
        "per decision",
        "refusals inside the block window",
        "their round trips",
      ],
      r.roundTrips.map((t) => [
        t.store,
        t.decisions,
        t.roundTrips,
        t.perDecision,
        t.blocked ?? "–",
        t.blockedRoundTrips ?? "–",
      ]),
    ),
    "Lock path: rapid retries of one key (20 at a time) against the idempotency block on PostgreSQL, with and without the README's limiter keyed by user + `Idempotency-Key` (`limit: 5`):",
    table(
      ["lock-path limiter", "retries", "store creates", "executions", "refused (429)"],
      r.lockPath.map((s) => [s.limiter ? "yes" : "no", s.retries, s.creates, s.executions, s.refused]),
    ),
  ].join("\n\n");
}

function errorHandler(results: BenchResults): string {
  const e = results.errorHandler;
  if (!e) return "";
  const peer = e.peer === "measured" ? [] : [`hono-problem-details: ${e.peer}.`];
  return [
    `${cpuMethod(e.cpu)} Hono: the bare route (201), and the same route throwing the README's typed problem (402, \`defineProblem\` / \`problemDetails()\`) answered by our \`problemDetails().onError\` and by hono-problem-details' \`problemDetailsHandler()\`, each with its default logging (none for a 4xx). Their \`fails\` column counts the 402s they are meant to answer. ${PAIRED_METHOD}`,
    cpuTable(e.cpu),
    ...(e.comparison ? [comparisonTable([e.comparison])] : []),
    ...peer,
  ].join("\n\n");
}

/** One table per group of servers measured together (a group's `added` is against its own bare route). */
function groupTables(list: CpuRow[]): string[] {
  const groups = [...new Set(list.map((row) => row.group))];
  return groups.map((group) => cpuTable(list.filter((row) => row.group === group)));
}

function roundTrips(results: BenchResults): string {
  const rows = (results.roundTrips ?? []).map((trip) => [
    trip.name,
    trip.store,
    trip.cache,
    trip.target,
    trip.met ? "yes" : "**no**",
  ]);
  return table(["Request", "store round trips", "cache round trips", "target", "met"], rows);
}

function peers(results: BenchResults): string {
  return peerTable(results.peers ?? []);
}

function peerTable(list: PeerRow[]): string {
  const rows = list.map((row) => [
    row.storeClass,
    LOAD_MODES[row.mode],
    row.label.replace("express ", ""),
    row.requestsPerSecond,
    row.p50Ms,
    row.p99Ms,
    row.comparedWith?.replace("express ", "") ?? "",
    ...ratioCells(row.vsBlocks),
    failures(row),
  ]);
  return table(
    [
      "Store class",
      "Scenario",
      "Library",
      "req/s",
      "p50",
      "p99",
      "ours (same shape)",
      "req/s x ours",
      "p50 x ours",
      "p99 x ours",
      "fails",
    ],
    rows,
  );
}

function transactional(results: BenchResults): string {
  const t = results.transactional;
  if (!t) return "";
  const rows = (list: TransactionalRow[]) =>
    list.map((row) => [
      row.label,
      row.requestsPerSecond,
      row.p99Ms,
      row.commitsPerRequest,
      x(row.versus?.requestsPerSecond),
      x(row.versus?.p99),
    ]);
  return [
    `In process, ${t.lanes} concurrent first requests (fresh keys; a row naming its lanes ran that many) for ${t.turnSeconds} s per turn, contenders in alternation; ratios are the median of per-round ratios. Commits are counted on the client (statements outside a transaction, plus committed transactions). Rows with a "WAL flush" run with every WAL flush made that much slower (\`commit_delay\`, held under the WAL write lock like a slow fsync), as on networked block storage; this machine's own disk flushes in about 0.1 ms (\`pg_test_fsync\`), so there commits cost little.`,
    table(["First request", "req/s", "p99", "commits per request", "req/s x floor", "p99 x floor"], rows(t.vsFloor)),
    "Non-transactional `execute` through each client adapter, each client in its own alternation with the pg adapter (whose row gathers its turns of every pairing; PGlite runs in process on one connection: not compared in req/s). Prisma is held to the target as `blocks add` wires it, with the pg Pool under PrismaPg passed as `pool`; the row without it shows what its query engine costs per statement:",
    table(["Client", "req/s", "p99", "commits per request", "req/s x pg", "p99 x pg"], rows(t.clients)),
  ].join("\n\n");
}

function mysqlFloor(results: BenchResults): string {
  const m = results.mysqlFloor;
  if (!m) return "";
  const rows = m.rows.map((row) => [
    row.label,
    row.requestsPerSecond,
    row.p99Ms,
    row.commitsPerRequest,
    x(row.versus?.requestsPerSecond),
    x(row.versus?.p99),
  ]);
  return [
    `In process on MYSQL_URL, ${m.lanes} concurrent first requests (fresh keys) for ${m.turnSeconds} s per turn, the two in alternation; ratios are the median of per-round ratios. Statements are counted on the pool. Store round trips: first request ${m.roundTrips.firstRequest}, replay ${m.roundTrips.replay}.`,
    table(["First request", "req/s", "p99", "statements per request", "req/s x floor", "p99 x floor"], rows),
  ].join("\n\n");
}

function outbox(results: BenchResults): string {
  const o = results.outbox;
  if (!o) return "";
  return [
    `Each round seeds a fresh table with ${o.messages} messages and drains it with the outbox block's relay (batch ${o.batch}, a no-op publisher) and, in alternating order, with a hand-written loop (a transaction per batch: \`SELECT ... FOR UPDATE SKIP LOCKED\`, publish, \`UPDATE\`, \`COMMIT\`). Medians over ${o.rounds} rounds; the ratio is the median of per-round ratios.`,
    table(
      ["Drain", "msg/s (median)", "rounds"],
      [
        ["relay", o.relayPerSecond, o.perRound.map((r) => r.relay).join(", ")],
        ["hand-written loop", o.loopPerSecond, o.perRound.map((r) => r.loop).join(", ")],
      ],
    ),
    `Relay / loop: ${o.ratio}x.`,
  ].join("\n\n");
}

function scaleOut(results: BenchResults): string {
  const s = results.scaleOut;
  if (!s) return "";
  return [
    "Round trips of one request through `IdempotencyHandler.execute` (every ioredis command, on each cluster node's connection; every DynamoDB API call), counted, not timed (dynalite's latency means nothing):",
    table(
      ["Store", "first request", "replay", "conflict (same key, other payload)"],
      s.roundTrips.map((t) => [t.store, t.firstRequest, t.replay, t.conflict]),
    ),
    "Our `RedisStore` (standalone Redis, no cache) on Express against the peers' own Redis storages, each peer against our route of its shape, in one group per client: `redis-store` on ioredis (the default), `redis-store-node-redis` on node-redis (RESP3, as `createClient` comes):",
    peerTable(s.peers),
  ].join("\n\n");
}

function jobs(results: BenchResults): string {
  const rows = (results.jobs ?? []).flatMap((size) =>
    size.runs.map((run) => [
      size.rows.toLocaleString("en-US"),
      run.job,
      run.batchMs,
      run.executionMs,
      run.handled.join(" "),
      run.scans.map(shortScan).join("; "),
    ]),
  );
  const plans = (results.jobs ?? []).flatMap((size) =>
    size.runs.map(
      (run) =>
        `<details><summary>${run.job}, ${size.rows.toLocaleString("en-US")} rows</summary>\n\n\`\`\`\n${run.plan}\n\`\`\`\n</details>`,
    ),
  );
  return [
    table(["Rows", "Job (limit 100)", "batch ms (median)", "in PostgreSQL ms", "rows per batch", "access paths"], rows),
    "EXPLAIN (ANALYZE, BUFFERS) of one batch each (run in a rolled-back transaction):",
    ...plans,
  ].join("\n\n");
}

/** Drops the run-specific table prefix so the access paths read alike at every size. */
function shortScan(scan: string): string {
  return scan.replace(/bench_[a-z0-9]+_jobs_\d+/g, "t");
}

function cli(results: BenchResults): string {
  const c = results.cli;
  if (!c) return "";
  if (!c.available) return `Not run: ${c.reason}`;
  const rows = c.timings.map((t) =>
    "medianMs" in t ? [t.fixture, t.medianMs, t.runsMs.join(", "), t.files] : [t.fixture, "failed", t.error, ""],
  );
  const profile = c.profileSummary
    ? `\n\nProfile of one \`add\` (self time by package): ${c.profileSummary.packages
        .slice(0, 6)
        .map((p) => `${p.name} ${p.percent}%`)
        .join(", ")}.`
    : "";
  return `\`${c.command}\` into a fresh copy of each fixture (after an untimed \`init --yes\`), wall time including Node's start:\n\n${table(["Fixture", "median ms", "runs ms", "files after"], rows)}${profile}`;
}

function targets(results: BenchResults): string {
  return table(
    ["Target", "Measured", "Met"],
    results.targets.map((t) => [t.target, t.measured, t.met ? "yes" : "**no**"]),
  );
}

export function renderMarkdown(results: BenchResults): string {
  const sections: Array<[string, string, boolean]> = [
    ["1. HTTP overhead against the bare route", overhead(results), Boolean(results.overhead)],
    ["2. Our PostgreSQL configuration against the floor (Express)", floor(results), Boolean(results.overhead)],
    ["3. Server CPU per request, every framework adapter", cpu(results), Boolean(results.cpu)],
    ["4. Round trips per request", roundTrips(results), Boolean(results.roundTrips)],
    ["5. Peers on Express", peers(results), Boolean(results.peers)],
    ["6. Transactional mode and database clients", transactional(results), Boolean(results.transactional)],
    ["6b. MySqlStore against the MySQL floor", mysqlFloor(results), Boolean(results.mysqlFloor)],
    ["6c. Outbox relay", outbox(results), Boolean(results.outbox)],
    ["7. Rate limiter", rateLimiter(results), Boolean(results.rateLimiter)],
    ["7b. Error handler", errorHandler(results), Boolean(results.errorHandler)],
    ["8. Scale-out stores", scaleOut(results), Boolean(results.scaleOut)],
    ["9. Maintenance jobs at scale", jobs(results), Boolean(results.jobs)],
    ["10. CLI", cli(results), Boolean(results.cli)],
    ["Targets", targets(results), true],
  ];
  const body = sections.filter(([, , shown]) => shown).map(([title, content]) => `## ${title}\n\n${content}`);
  return [`# Benchmark results\n\n${meta(results)}`, ...body].join("\n\n") + "\n";
}
