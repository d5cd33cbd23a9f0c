// Runs the store contract over every client adapter: PostgresStore on pg, PGlite, postgres.js, Drizzle, Prisma, Kysely,
// TypeORM and Knex; MySqlStore on Drizzle and Kysely over mysql2.
import { clientKinds, clientStoreKind } from "../support/client-harness";
import { mysqlClientStoreKinds } from "../support/mysql-store-harness";
import { describeStoreContract } from "../support/store-contract";

for (const kind of clientKinds) describeStoreContract(clientStoreKind(kind));
for (const kind of mysqlClientStoreKinds) describeStoreContract(kind);
