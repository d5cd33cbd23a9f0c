// Benchmark settings, from the environment with short defaults for a noisy shared 2-core machine.

function numberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}".`);
  return value;
}

/** How the CPU scenarios load a group's servers: all at once in one window per round, or one after another. */
const CPU_METHODS = ["together", "turns"] as const;

function cpuMethodFromEnv(): (typeof CPU_METHODS)[number] {
  const raw = process.env.BENCH_CPU_METHOD || "together";
  const method = CPU_METHODS.find((known) => known === raw);
  if (!method) throw new Error(`BENCH_CPU_METHOD must be one of ${CPU_METHODS.join(", ")}, got "${raw}".`);
  return method;
}

/** Which scenario groups to run: BENCH_ONLY=overhead,cpu,... (default: all). */
export const SCENARIOS = [
  "round-trips",
  "overhead",
  "cpu",
  "peers",
  "transactional",
  "mysql-floor",
  "outbox",
  "rate-limiter",
  "error-handler",
  "scale-out",
  "jobs",
  "cli",
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export function selectedScenarios(): ScenarioName[] {
  const only = process.env.BENCH_ONLY?.split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  if (!only?.length) return [...SCENARIOS];
  const unknown = only.filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (unknown.length)
    throw new Error(`BENCH_ONLY: unknown scenario(s) ${unknown.join(", ")}; known: ${SCENARIOS.join(", ")}.`);
  return SCENARIOS.filter((name) => only.includes(name));
}

export const settings = {
  /** Seconds of load per measured run. */
  durationSeconds: numberFromEnv("BENCH_DURATION", 5),
  /** Alternating rounds per group (A B A B ...). */
  rounds: numberFromEnv("BENCH_ROUNDS", 2),
  /** Seconds of unrecorded load each server gets before its first round. */
  warmupSeconds: numberFromEnv("BENCH_WARMUP", 1),
  /** Concurrent HTTP connections from the load generator. */
  connections: numberFromEnv("BENCH_CONNECTIONS", 16),
  /** Size of every server's pg Pool (the floor and the block get the same). */
  poolSize: numberFromEnv("BENCH_POOL_SIZE", 10),
  /** Requests per server and round in the CPU-per-request scenarios (after 2 000 unmeasured). */
  cpuRequests: numberFromEnv("BENCH_CPU_REQUESTS", 10_000),
  /** `turns` measures every CPU group one server at a time (the method before the windows, to compare with older runs). */
  cpuMethod: cpuMethodFromEnv(),
  /** Seconds per turn of the in-process transactional and per-client comparisons. */
  transactionalSeconds: numberFromEnv("BENCH_TX_SECONDS", 3),
  /** Messages in each round's backlog for the outbox relay. */
  outboxMessages: numberFromEnv("BENCH_OUTBOX_MESSAGES", 20_000),
  /** Keys primed before a replay run; replays cycle through them. */
  replayKeys: numberFromEnv("BENCH_REPLAY_KEYS", 200),
  /** Row counts for the maintenance-job scale runs. */
  jobRows: (process.env.BENCH_JOB_ROWS ?? "10000,100000,1000000").split(",").map(Number),
  /** Write `--cpu-prof` profiles of every server process into bench/results/profiles. */
  cpuProfile: process.env.BENCH_CPU_PROF === "1",
  databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  mysqlUrl: process.env.MYSQL_URL ?? "mysql://root@127.0.0.1:3306/test",
};

/** Only loopback targets: the benchmark must never send load anywhere else. */
export function assertLoopback(url: string): string {
  const host = new URL(url).hostname;
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(host))
    throw new Error(`Refusing a non-loopback benchmark target: ${url}`);
  return url;
}
