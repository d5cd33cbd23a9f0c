// Renders the wiring the user owns after `add idempotency`: the handler over their clients, its test, and the cron entry.
import path from "node:path";
import type { BlocksConfig } from "../config/blocks-config.js";
import { transformSource } from "../transforms/transform.js";
import { DATABASE_CLIENTS, type DatabaseClient } from "./setup-clients.js";

export type SetupChoices = {
  frameworks: string[];
  /** Chosen features: "cache" (Redis), "metrics" (Prometheus). */
  features: Set<string>;
  /** The logger block is (or is being) added: its pino logger is used instead of the console. */
  loggerBlock: boolean;
  client?: DatabaseClient;
  /** The migration's table, when not the default one. */
  table?: string | undefined;
};

export type SetupFile = { target: string; content: string };

/** Where the wiring lands: beside the blocks folder (src/blocks -> src/idempotency-setup.ts). */
export function setupTargets(config: BlocksConfig): { setup: string; test: string; job: string } {
  const parent = path.posix.dirname(config.dir);
  const at = (file: string) => path.posix.normalize(path.posix.join(parent, file));
  return { setup: at("idempotency-setup.ts"), test: at("idempotency-setup.test.ts"), job: at("jobs/idempotency-maintenance.ts") };
}

/**
 * The three files, with imports already in the project's style. They import the blocks by relative
 * paths: they then run under plain `node` and `vitest`, alias or not.
 *
 * @example
 * renderSetup(config, { frameworks: ["express"], features: new Set(["cache"]), loggerBlock: false });
 */
export function renderSetup(config: BlocksConfig, choices: SetupChoices): SetupFile[] {
  const targets = setupTargets(config);
  const cache = choices.features.has("cache");
  const files = [
    { target: targets.setup, content: setupModule(choices) },
    { target: targets.test, content: setupTest(cache, suffix(config, "./idempotency-setup")) },
    { target: targets.job, content: maintenanceJob(suffix(config, "../idempotency-setup")) },
  ];
  const planned = new Map(
    ["idempotency/index.ts", "idempotency/maintenance.ts", "idempotency/utils/prometheus-metrics.ts", "idempotency/utils/create-logger.ts", "logger/index.ts"].map(
      (file) => [file, { target: path.posix.join(config.dir, file), block: file.split("/")[0] as string }],
    ),
  );
  return files.map((file) => ({
    target: file.target,
    content: transformSource(file.content, file.target, {
      from: { target: file.target },
      planned,
      alias: undefined,
      blocksDir: config.dir,
      moduleStyle: config.moduleStyle,
    }),
  }));
}

function suffix(config: BlocksConfig, specifier: string): string {
  return config.moduleStyle === "nodenext" ? `${specifier}.js` : specifier;
}

const METRICS_ROUTES: Record<string, { imports: string; route: string[] }> = {
  express: {
    imports: 'import type { RequestHandler } from "express";',
    route: [
      "export const metricsRoute: RequestHandler = async (_req, res) => {",
      "  res.type(metricsRegistry.contentType).send(await metricsRegistry.metrics());",
      "};",
    ],
  },
  fastify: {
    imports: 'import type { FastifyReply, FastifyRequest } from "fastify";',
    route: [
      "export async function metricsRoute(_request: FastifyRequest, reply: FastifyReply) {",
      "  return reply.type(metricsRegistry.contentType).send(await metricsRegistry.metrics());",
      "}",
    ],
  },
  hono: {
    imports: 'import type { Context } from "hono";',
    route: [
      "export async function metricsRoute(c: Context) {",
      '  return c.body(await metricsRegistry.metrics(), 200, { "content-type": metricsRegistry.contentType });',
      "}",
    ],
  },
};

function setupModule(choices: SetupChoices): string {
  const cache = choices.features.has("cache");
  const framework = choices.frameworks.find((name) => name in METRICS_ROUTES);
  const metrics = choices.features.has("metrics");
  const route = metrics && framework ? METRICS_ROUTES[framework] : undefined;
  const client = DATABASE_CLIENTS[choices.client ?? "pg"];
  const lines = [
    "// Wires the idempotency block into this app: written once by `blocks add`, yours to edit (`add` never replaces it).",
    ...client.imports,
    ...(cache ? ['import { Redis } from "ioredis";'] : []),
    ...(metrics ? ['import { collectDefaultMetrics, Registry } from "prom-client";'] : []),
    ...(route ? [route.imports] : []),
    `import { IdempotencyHandler, PostgresStore${cache ? ", RedisCache" : ""} } from "@/blocks/idempotency";`,
    'import { runMaintenanceOnce, startMaintenance, type LockClient } from "@/blocks/idempotency/maintenance";',
    ...(metrics ? ['import { createPrometheusMetrics } from "@/blocks/idempotency/utils/prometheus-metrics";'] : []),
    choices.loggerBlock ? 'import { logger } from "@/blocks/logger";' : 'import { createLoggerAdapter } from "@/blocks/idempotency/utils/create-logger";',
    "",
    "/** What the setup needs from a database client: SQL for the store and the maintenance lock, and a way to close it. */",
    "export type Database = LockClient & { end(): Promise<void> };",
    "",
    ...client.connect,
    ...(cache
      ? [
          "",
          "/** The cache's Redis client: when Redis fails, requests go on from PostgreSQL (the block logs and counts it). */",
          'export function connectRedis(url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"): Redis {',
          "  return new Redis(url, { maxRetriesPerRequest: 1 });",
          "}",
        ]
      : []),
    ...(choices.loggerBlock
      ? []
      : [
          "",
          "/** Where the block's log lines go (its README lists them); pass your pino logger instead if the app has one. */",
          "const logger = createLoggerAdapter((level, msg, meta) => {",
          '  if (level !== "debug") console[level](msg, meta ?? {});',
          "});",
        ]),
    ...(metrics
      ? [
          "",
          "/** The app's Prometheus registry: the idempotency counters plus Node's process metrics. */",
          "export const metricsRegistry = new Registry();",
          "collectDefaultMetrics({ register: metricsRegistry });",
          "const metrics = createPrometheusMetrics(metricsRegistry);",
          ...(route ? ["", `/** Serves the registry to Prometheus: \`app.get("/metrics", metricsRoute)\`. */`, ...route.route] : []),
        ]
      : []),
    "",
    "export type IdempotencySetup = {",
    "  handler: IdempotencyHandler;",
    "  /** Runs recovery (every 5 minutes) and cleanup (hourly) in this process; SIGTERM and SIGINT stop them and close the clients. */",
    "  startMaintenance(): void;",
    "  /** Runs both jobs once: the cron entry calls this, then `close()`. */",
    "  runMaintenanceOnce(): Promise<void>;",
    "  /** Stops the jobs and closes the clients, so the process can exit. */",
    "  close(): Promise<void>;",
    "};",
    "",
    "/**",
    " * @example",
    " * const idempotency = createIdempotency();",
    " * idempotency.startMaintenance();",
    ' * app.post("/payments", idempotent(idempotency.handler, { getUserId, requireKey: true, run }));',
    " */",
    `export function createIdempotency(clients: { db?: Database${cache ? "; redis?: Redis | null" : ""} } = {}): IdempotencySetup {`,
    "  const db = clients.db ?? connectDatabase();",
    ...(cache ? ["  const redis = clients.redis === undefined ? connectRedis() : clients.redis;"] : []),
    `  const handler = new IdempotencyHandler(new PostgresStore(db${choices.table && choices.table !== "idempotency_records" ? `, { table: "${choices.table}" }` : ""}), ${cache ? "redis ? new RedisCache(redis) : undefined" : "undefined"}, { logger${metrics ? ", metrics" : ""} });`,
    "  let maintenance: { stop(): void } | undefined;",
    "  let closing: Promise<void> | undefined;",
    "  const close = () =>",
    "    (closing ??= (async () => {",
    "      maintenance?.stop();",
    ...(cache ? ["      await redis?.quit();"] : []),
    "      await db.end();",
    "    })());",
    "  const shutdown = async (signal: NodeJS.Signals) => {",
    "    await close();",
    "    // Listening for a signal turns off Node's default exit: when nothing else in the app handles it, exit as Node would.",
    "    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);",
    "  };",
    "  return {",
    "    handler,",
    "    startMaintenance() {",
    "      if (maintenance) return;",
    '      maintenance = startMaintenance(handler, db, { onError: (err, job) => logger.error({ err, job }, "idempotency: maintenance failed") });',
    '      for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => void shutdown(signal));',
    "    },",
    "    async runMaintenanceOnce() {",
    '      for (const job of ["recover", "cleanup"] as const) {',
    '        logger.info({ ...(await runMaintenanceOnce(job, handler, db)) }, "idempotency: maintenance ran");',
    "      }",
    "    },",
    "    close,",
    "  };",
    "}",
  ];
  return `${lines.join("\n")}\n`;
}

function setupTest(cache: boolean, setupImport: string): string {
  return `// Checks this app's idempotency wiring on an embedded PostgreSQL (PGlite): one run per key, maintenance, a clean close.
import { PGlite } from "@electric-sql/pglite";
import { expect, it } from "vitest";
import { postgresSchemaStatements } from "@/blocks/idempotency";
import { createIdempotency, type Database } from "${setupImport}";

it("runs an operation once per key, runs the maintenance jobs, and closes its clients", async () => {
  const pglite = new PGlite();
  for (const statement of postgresSchemaStatements()) await pglite.query(statement);
  const db: Database = { query: (text, params) => pglite.query(text, params), end: () => pglite.close() };
  const idempotency = createIdempotency({ db${cache ? ", redis: null" : ""} });
  let runs = 0;
  const scope = { operation: "payments:create", userId: "u_1", key: "k_1", payload: { amount: 100 } };
  const first = await idempotency.handler.execute(scope, async () => ({ id: ++runs }));
  const retry = await idempotency.handler.execute(scope, async () => ({ id: ++runs }));
  expect(retry).toEqual({ response: first.response, replayed: true });
  expect(runs).toBe(1);
  await idempotency.runMaintenanceOnce();
  await idempotency.close();
  expect(pglite.closed).toBe(true);
});
`;
}

function maintenanceJob(setupImport: string): string {
  return `// Cron entry: runs the idempotency maintenance once, closes every client and exits. Schedule its compiled file every 5 minutes.
import { createIdempotency } from "${setupImport}";

const idempotency = createIdempotency();
idempotency
  .runMaintenanceOnce()
  .catch((err: unknown) => {
    console.error("idempotency maintenance failed", err);
    process.exitCode = 1;
  })
  .finally(() => idempotency.close());
`;
}
