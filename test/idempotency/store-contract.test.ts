// Runs the store contract against every store: Memory, PostgreSQL (PGlite, DATABASE_URL), DynamoDB
// (dynalite in process), and Redis (REDIS_URL standalone, and a local three-master Redis Cluster).
import { describe, it } from "vitest";
import { describeStoreContract } from "./support/store-contract";
import { allStoreKinds } from "./support/store-harness";
import { redisUrl } from "./support/services";
import { mysqlUrl } from "./support/mysql-store-harness";

for (const kind of allStoreKinds) describeStoreContract(kind);

describe.skipIf(!!redisUrl)(
  "[REDIS_URL] IdempotencyStore contract: RedisStore (standalone and local Redis Cluster)",
  () => {
    it("[REDIS_URL] runs only with REDIS_URL (the cluster uses the same machine's redis-server)", () => {});
  },
);

describe.skipIf(!!mysqlUrl)("[MYSQL_URL] IdempotencyStore contract: MySqlStore", () => {
  it("[MYSQL_URL] runs only with MYSQL_URL (MySQL 8 or MariaDB 10.6+)", () => {});
});
