// Renders the wiring the user owns after `add idempotency`: the handler over their clients, its test, and the cron entry.
import path from "node:path";
import type { BlocksConfig } from "../config/blocks-config.js";
import { transformSource } from "../transforms/transform.js";
import type { DatabaseClient } from "./setup-clients.js";
import type { SqliteClientName } from "./setup-sql-stores.js";
import { storeWiring, type RecordStore } from "./setup-stores.js";
import { setupTargets } from "./setup-targets.js";
import { setupTest } from "./setup-test.js";

export type SetupChoices = {
  frameworks: string[];
  /** Chosen features: "cache" (Redis), "metrics" (Prometheus). */
  features: Set<string>;
  /** The logger block is (or is being) added: its pino logger is used instead of the console. */
  loggerBlock: boolean;
  /** The project's PostgreSQL client (see `wiringClient`). @default "pg" */
  client?: DatabaseClient | undefined;
  /** Where the records live (`--store`). @default "postgres" */
  store?: RecordStore | undefined;
  /** SqliteStore's client (`--store sqlite`). @default "better-sqlite3" */
  sqliteClient?: SqliteClientName | undefined;
  /** The migration's table, when not the default one. */
  table?: string | undefined;
};

export type SetupFile = { target: string; content: string };

/**
 * The three files, with imports already in the project's style. They import the blocks by relative
 * paths: they then run under plain `node` and `vitest`, alias or not.
 *
 * @example
 * renderSetup(config, { frameworks: ["express"], features: new Set(["cache"]), loggerBlock: false });
 */
export function renderSetup(config: BlocksConfig, choices: SetupChoices): SetupFile[] {
  const targets = setupTargets(config);
  const store = choices.store ?? "postgres";
  const test = {
    store,
    client: choices.client ?? "pg",
    sqliteClient: choices.sqliteClient ?? "better-sqlite3",
    cache: choices.features.has("cache"),
    table: choices.table,
  };
  const files = [
    { target: targets.setup, content: setupModule(choices) },
    { target: targets.test, content: setupTest(test, suffix(config, "./idempotency-setup")) },
    { target: targets.job, content: maintenanceJob(suffix(config, "../idempotency-setup")) },
  ];
  const planned = new Map(
    SETUP_IMPORTS.map(
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

/** Every block file the wiring, its test or its job may import: the transform rewrites these specifiers. */
const SETUP_IMPORTS = [
  "idempotency/index.ts",
  "idempotency/maintenance.ts",
  "idempotency/setup/lifecycle.ts",
  "idempotency/setup/locked-jobs.ts",
  "idempotency/setup/recovery-jobs.ts",
  "idempotency/utils/prometheus-metrics.ts",
  "idempotency/utils/create-logger.ts",
  "idempotency/caches/redis-cache.ts",
  "idempotency/stores/redis-store.ts",
  "idempotency/stores/dynamodb-store.ts",
  "idempotency/stores/dynamodb-table.ts",
  "idempotency/stores/mysql-store.ts",
  "idempotency/stores/mysql-schema.ts",
  "idempotency/stores/sqlite-store.ts",
  "idempotency/stores/sqlite-schema.ts",
  ...["mysql2", "better-sqlite3", "libsql"].map((client) => `idempotency/stores/clients/${client}.ts`),
  ...["pg", "postgres-js", "drizzle", "kysely", "prisma", "typeorm", "knex"].map((client) => `idempotency/stores/clients/${client}.ts`),
  "logger/index.ts",
];

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
  const store = storeWiring(choices.store ?? "postgres", choices.client ?? "pg", choices.table, choices.sqliteClient);
  // A Redis store needs no Redis cache in front of it.
  const cache = choices.features.has("cache") && choices.store !== "redis";
  const framework = choices.frameworks.find((name) => name in METRICS_ROUTES);
  const metrics = choices.features.has("metrics");
  const route = metrics && framework ? METRICS_ROUTES[framework] : undefined;
  const lines = [
    "// Wires the idempotency block into this app: written once by `blocks add`, yours to edit (`add` never replaces it).",
    ...store.imports,
    'import { idempotencyLifecycle, type Lifecycle } from "@/blocks/idempotency/setup/lifecycle";',
    store.lock ? 'import { lockedJobs } from "@/blocks/idempotency/setup/locked-jobs";' : 'import { recoveryJobs } from "@/blocks/idempotency/setup/recovery-jobs";',
    ...(cache ? ['import { Redis } from "ioredis";'] : []),
    ...(metrics ? ['import { collectDefaultMetrics, Registry } from "prom-client";'] : []),
    ...(route ? [route.imports] : []),
    `import { ${["IdempotencyHandler", ...store.indexImports].join(", ")} } from "@/blocks/idempotency";`,
    ...(cache ? ['import { RedisCache } from "@/blocks/idempotency/caches/redis-cache";'] : []),
    ...(metrics ? ['import { createPrometheusMetrics } from "@/blocks/idempotency/utils/prometheus-metrics";'] : []),
    choices.loggerBlock ? 'import { logger } from "@/blocks/logger";' : 'import { createLoggerAdapter } from "@/blocks/idempotency/utils/create-logger";',
    "",
    ...store.declarations,
    ...(cache
      ? [
          "",
          "/** The cache's Redis client: when Redis fails, requests go on from the store (the block logs and counts it). */",
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
    "/** The handler, and its run and stop (the maintenance jobs, signals, the close order: setup/lifecycle.ts). */",
    `export type IdempotencySetup = Lifecycle & { handler: ${store.handlerType} };`,
    "",
    "/**",
    " * @example",
    " * const idempotency = createIdempotency();",
    " * idempotency.startMaintenance();",
    ' * app.post("/payments", idempotent(idempotency.handler, { getUserId, requireKey: true, run }));',
    " * // An app that drains on SIGTERM closes the clients after its last request:",
    ' * process.once("SIGTERM", () => server.close(() => void idempotency.close()));',
    " */",
    `export function createIdempotency(clients: { db?: Database${cache ? "; redis?: Redis | null" : ""} } = {}): IdempotencySetup {`,
    "  const db = clients.db ?? connectDatabase();",
    ...store.open.map((line) => `  ${line}`),
    ...(cache ? ["  const redis = clients.redis === undefined ? connectRedis() : clients.redis;"] : []),
    `  const handler = new ${store.handlerType}(${store.store}, ${cache ? "redis ? new RedisCache(redis) : undefined" : "undefined"}, { logger${metrics ? ", metrics" : ""} });`,
    `  const jobs = ${store.lock ? `lockedJobs(handler, ${store.lock}, logger)` : `recoveryJobs(handler, logger${store.recoveryOptions ? `, ${store.recoveryOptions}` : ""})`};`,
    ...closeClients(cache ? ["await redis?.quit();", store.end] : [store.end]),
    "  return { handler, ...idempotencyLifecycle({ jobs, logger, close }) };",
    "}",
  ];
  return `${lines.join("\n")}\n`;
}

/** The clients' close, in order; `async` only where something is awaited (DynamoDB's `destroy()` is synchronous). */
function closeClients(steps: string[]): string[] {
  if (steps.some((step) => step.startsWith("await "))) return ["  const close = async () => {", ...steps.map((step) => `    ${step}`), "  };"];
  return ["  const close = () => {", ...steps.map((step) => `    ${step}`), "    return Promise.resolve();", "  };"];
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
