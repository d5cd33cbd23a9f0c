// The test `add` writes beside the wiring module: it runs the app's own wiring against its store.
import type { DatabaseClient } from "./setup-clients.js";
import type { SqliteClientName } from "./setup-sql-stores.js";
import type { RecordStore } from "./setup-stores.js";

export type SetupTestChoices = {
  store: RecordStore;
  client: DatabaseClient;
  sqliteClient?: SqliteClientName | undefined;
  cache: boolean;
  table: string | undefined;
};

/**
 * `pg` runs on an embedded PostgreSQL (PGlite), always. The other clients and stores need their
 * server, named by the variable the wiring reads (DATABASE_URL, REDIS_URL, AWS_ENDPOINT_URL_DYNAMODB,
 * MYSQL_URL); the test is skipped, visibly, without it. SQLite runs on a file in a temporary folder.
 *
 * @example
 * setupTest({ store: "postgres", client: "kysely", cache: false, table: undefined }, "./idempotency-setup.js");
 */
export function setupTest(choices: SetupTestChoices, setupImport: string): string {
  const variant = testVariant(choices);
  const redisNull = choices.cache && choices.store !== "redis" ? ", redis: null" : "";
  const lines = [
    `// Checks this app's idempotency wiring on ${variant.where}: one run per key, maintenance, a clean close.`,
    'import { randomUUID } from "node:crypto";',
    ...variant.imports,
    'import { expect, it } from "vitest";',
    `import { ${variant.setupNames.join(", ")} } from "${setupImport}";`,
    "",
    `${variant.it}("runs an operation once per key${variant.transactions ? " (in a transaction too)" : ""}, runs the maintenance jobs, and closes its clients${variant.needs}", async () => {`,
    ...variant.open,
    `  const idempotency = createIdempotency({ db${redisNull} });`,
    "  let runs = 0;",
    '  const scope = { operation: "payments:create", userId: "u_1", key: randomUUID(), payload: { amount: 100 } };',
    "  const first = await idempotency.handler.execute(scope, () => ({ id: ++runs }));",
    "  const retry = await idempotency.handler.execute(scope, () => ({ id: ++runs }));",
    "  expect(retry).toEqual({ response: first.response, replayed: true });",
    ...(variant.transactions
      ? [
          "  // The record, the operation's writes (none here) and the result commit in one transaction.",
          "  const order = { ...scope, key: randomUUID() };",
          "  const committed = await idempotency.handler.executeInTransaction(order, () => ({ id: ++runs }));",
          "  const replay = await idempotency.handler.executeInTransaction(order, () => ({ id: ++runs }));",
          "  expect(replay).toEqual({ response: committed.response, replayed: true });",
          "  expect(runs).toBe(2);",
        ]
      : ["  expect(runs).toBe(1);"]),
    "  await idempotency.runMaintenanceOnce();",
    "  await idempotency.close();",
    ...variant.closed,
    // A first PGlite start (or a cold connection) can take several seconds on a busy CI runner.
    "}, 30_000);",
  ];
  return `${lines.join("\n")}\n`;
}

type TestVariant = {
  where: string;
  imports: string[];
  setupNames: string[];
  it: string;
  /** Said in the test's name when it needs a server. */
  needs: string;
  open: string[];
  transactions: boolean;
  closed: string[];
};

function testVariant({ store, client, sqliteClient, table }: SetupTestChoices): TestVariant {
  const tableArg = table && table !== "idempotency_records" ? `"${table}"` : "";
  if (store === "mysql") {
    return {
      where: "MySQL or MariaDB (MYSQL_URL)",
      imports: ['import { mySqlSchemaStatements } from "@/blocks/idempotency/stores/mysql-schema";'],
      setupNames: ["connectDatabase", "createIdempotency"],
      it: "it.skipIf(!process.env.MYSQL_URL)",
      needs: " (needs MYSQL_URL)",
      open: [
        "  const db = connectDatabase();",
        "  // The migration's statements, all safe to run again; the keys are new on every run.",
        `  for (const statement of mySqlSchemaStatements(${tableArg})) await db.query(statement);`,
      ],
      transactions: true,
      closed: ['  await expect(db.query("SELECT 1")).rejects.toThrow();'],
    };
  }
  if (store === "sqlite") return sqliteVariant(sqliteClient ?? "better-sqlite3", tableArg);
  if (store === "redis") {
    return {
      where: "Redis (REDIS_URL)",
      imports: [],
      setupNames: ["connectDatabase", "createIdempotency"],
      it: "it.skipIf(!process.env.REDIS_URL)",
      needs: " (needs REDIS_URL)",
      open: ["  const db = connectDatabase();"],
      transactions: false,
      // quit() resolves on Redis's reply; the socket closes just after.
      closed: ['  if (db.status !== "end") await new Promise((ended) => db.once("end", ended));', '  expect(db.status).toBe("end");'],
    };
  }
  if (store === "dynamodb") {
    return {
      where: "DynamoDB (AWS_ENDPOINT_URL_DYNAMODB, e.g. DynamoDB Local)",
      imports: [
        'import { CreateTableCommand, ResourceInUseException, waitUntilTableExists } from "@aws-sdk/client-dynamodb";',
        'import { dynamoDbTableDefinition } from "@/blocks/idempotency/stores/dynamodb-table";',
      ],
      setupNames: ["IDEMPOTENCY_TABLE", "connectDatabase", "createIdempotency"],
      it: "it.skipIf(!process.env.AWS_ENDPOINT_URL_DYNAMODB)",
      needs: " (needs AWS_ENDPOINT_URL_DYNAMODB)",
      open: [
        "  const db = connectDatabase();",
        "  const { createTable } = dynamoDbTableDefinition(IDEMPOTENCY_TABLE);",
        "  await db.send(new CreateTableCommand(createTable)).catch((err: unknown) => {",
        "    if (!(err instanceof ResourceInUseException)) throw err;",
        "  });",
        "  await waitUntilTableExists({ client: db, maxWaitTime: 60 }, { TableName: IDEMPOTENCY_TABLE });",
      ],
      transactions: false,
      closed: [],
    };
  }
  const schema = `postgresSchemaStatements(${tableArg})`;
  if (client === "pg") {
    return {
      where: "an embedded PostgreSQL (PGlite)",
      imports: ['import { PGlite } from "@electric-sql/pglite";', 'import { postgresSchemaStatements } from "@/blocks/idempotency";'],
      setupNames: ["createIdempotency", "type Database"],
      it: "it",
      needs: "",
      open: [
        "  const pglite = new PGlite();",
        `  for (const statement of ${schema}) await pglite.query(statement);`,
        "  const db: Database = { query: (text, params) => pglite.query(text, params), end: () => pglite.close() };",
      ],
      transactions: false,
      closed: ["  expect(pglite.closed).toBe(true);"],
    };
  }
  return {
    where: "PostgreSQL (DATABASE_URL)",
    imports: ['import { postgresSchemaStatements } from "@/blocks/idempotency";'],
    setupNames: ["connectDatabase", "createIdempotency", "bindDatabase"],
    it: "it.skipIf(!process.env.DATABASE_URL)",
    needs: " (needs DATABASE_URL)",
    open: [
      "  const db = connectDatabase();",
      "  const { sql } = bindDatabase(db);",
      "  // The migration's statements, all safe to run again; the keys are new on every run.",
      `  for (const statement of ${schema}) await sql.query(statement);`,
    ],
    transactions: true,
    closed: ['  await expect(sql.query("SELECT 1")).rejects.toThrow();'],
  };
}

function sqliteVariant(client: SqliteClientName, tableArg: string): TestVariant {
  const libsql = client === "libsql";
  return {
    where: `SQLite (${libsql ? "libSQL" : "better-sqlite3"}) in a temporary file`,
    imports: [
      'import { mkdtempSync, rmSync } from "node:fs";',
      'import { tmpdir } from "node:os";',
      'import { join } from "node:path";',
      'import { sqliteSchemaStatements } from "@/blocks/idempotency/stores/sqlite-schema";',
    ],
    setupNames: ["connectDatabase", "createIdempotency"],
    it: "it",
    needs: "",
    open: [
      '  const dir = mkdtempSync(join(tmpdir(), "idempotency-"));',
      `  const db = connectDatabase(${libsql ? '`file:${join(dir, "idempotency.db")}`' : 'join(dir, "idempotency.db")'});`,
      `  for (const statement of sqliteSchemaStatements(${tableArg})) ${libsql ? "await db.execute(statement)" : "db.exec(statement)"};`,
    ],
    transactions: true,
    closed: [libsql ? "  expect(db.closed).toBe(true);" : "  expect(db.open).toBe(false);", "  rmSync(dir, { recursive: true, force: true });"],
  };
}
