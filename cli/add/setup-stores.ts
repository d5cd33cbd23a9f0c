// The store piece of the generated wiring: PostgresStore on the project's client, RedisStore, DynamoDbStore,
// MySqlStore or SqliteStore.
import { DATABASE_CLIENTS, wiringClient, type DatabaseClient } from "./setup-clients.js";
import { mySqlWiring, sqliteClientOf, sqliteWiring, type SqliteClientName } from "./setup-sql-stores.js";

export type RecordStore = "postgres" | "redis" | "dynamodb" | "mysql" | "sqlite";

const STORE_FEATURES: Array<[string, RecordStore]> = [
  ["redis-store", "redis"],
  ["dynamodb-store", "dynamodb"],
  ["mysql-store", "mysql"],
  ["sqlite-store", "sqlite"],
];

/**
 * The store the chosen `--store` feature names, and the client PostgreSQL is reached through.
 *
 * @example
 * wiringChoices(new Set(["client-kysely"]), new Set(["kysely", "pg"])); // { store: "postgres", client: "kysely" }
 */
export function wiringChoices(
  features: Set<string>,
  declared: Set<string>,
): { store: RecordStore; client: DatabaseClient; sqliteClient: SqliteClientName } {
  const store = STORE_FEATURES.find(([feature]) => features.has(feature))?.[1] ?? "postgres";
  return { store, client: wiringClient(features, declared), sqliteClient: sqliteClientOf(features) };
}

/**
 * What the wiring module needs from its store: `declarations` define `Database` and
 * `connectDatabase()`; `open` runs in `createIdempotency` once `db` is known; `lock` is the
 * maintenance lock's client (PostgreSQL only: the other stores expire records themselves and
 * their recovery is safe to run from several instances at once, so it needs no lock).
 */
export type StoreWiring = {
  imports: string[];
  /** Names the module imports from the block's index, besides the handler. */
  indexImports: string[];
  declarations: string[];
  handlerType: string;
  open: string[];
  store: string;
  end: string;
  lock?: string;
  /** Without a lock: the options of `recoveryJobs` (the SQL stores also delete their expired rows). */
  recoveryOptions?: string;
};

/**
 * @example
 * storeWiring("postgres", "kysely", "orders_idempotency").store; // 'new PostgresStore(database.sql, { table: "orders_idempotency" })'
 */
export function storeWiring(
  store: RecordStore,
  client: DatabaseClient,
  table: string | undefined,
  sqliteClient: SqliteClientName = "better-sqlite3",
): StoreWiring {
  const tableOption = table && table !== "idempotency_records" ? `, { table: "${table}" }` : "";
  if (store === "mysql") return mySqlWiring(tableOption);
  if (store === "sqlite") return sqliteWiring(sqliteClient, tableOption);
  if (store === "redis") {
    return {
      imports: ['import { Redis } from "ioredis";', 'import { RedisStore } from "@/blocks/idempotency/stores/redis-store";'],
      declarations: [
        "/** Where the records live: Redis (read STORES.md on what Redis may lose in a crash). A Redis Cluster works too. */",
        "export type Database = Redis;",
        "",
        "/**",
        " * The store's Redis client; to use a Cluster, return `new Redis.Cluster([...])` and widen `Database`.",
        " * It fails fast when Redis is down (the handler answers STORE_UNAVAILABLE), and auto-pipelining",
        " * writes the commands of concurrent requests together: less CPU per request.",
        " */",
        'export function connectDatabase(url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"): Database {',
        "  return new Redis(url, { maxRetriesPerRequest: 1, enableAutoPipelining: true });",
        "}",
      ],
      indexImports: [],
      handlerType: "IdempotencyHandler",
      open: [],
      store: `new RedisStore(db${tableOption})`,
      end: "await db.quit();",
    };
  }
  if (store === "dynamodb") {
    return {
      imports: ['import { DynamoDBClient } from "@aws-sdk/client-dynamodb";', 'import { DynamoDbStore } from "@/blocks/idempotency/stores/dynamodb-store";'],
      declarations: [
        "/** Where the records live: DynamoDB. `npx blocks migrate --apply` creates the table (from stores/dynamodb-table.ts). */",
        "export type Database = DynamoDBClient;",
        `export const IDEMPOTENCY_TABLE = process.env.IDEMPOTENCY_TABLE ?? "${table ?? "idempotency_records"}";`,
        "",
        "/** Region, credentials and endpoint come from the AWS SDK's own settings (AWS_REGION, a role or profile; AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local, as for `blocks migrate --apply`). */",
        "export function connectDatabase(): Database {",
        "  return new DynamoDBClient({});",
        "}",
      ],
      indexImports: [],
      handlerType: "IdempotencyHandler",
      open: [],
      store: "new DynamoDbStore(db, { table: IDEMPOTENCY_TABLE })",
      end: "db.destroy();",
    };
  }
  const wiring = DATABASE_CLIENTS[client];
  return {
    imports: [
      ...wiring.imports,
      'import type { LockClient } from "@/blocks/idempotency/maintenance";',
    ],
    declarations: [
      "/** What the setup runs on: the store's SQL, the maintenance lock (a session advisory lock, held on one connection) and the close. */",
      "export type DatabaseUse = { sql: SqlClient | TransactionalSqlClient<Transaction>; lock: LockClient; end(): Promise<void> };",
      "",
      ...wiring.declarations,
    ],
    indexImports: ["PostgresStore", "type SqlClient", "type TransactionalSqlClient"],
    handlerType: "IdempotencyHandler<Transaction>",
    open: ["const database = bindDatabase(db);"],
    store: `new PostgresStore(database.sql${tableOption})`,
    end: "await database.end();",
    lock: "database.lock",
  };
}
