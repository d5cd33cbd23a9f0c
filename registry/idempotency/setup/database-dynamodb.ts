// DynamoDbStore: records in DynamoDB. `npx blocks migrate --apply` creates the table (from stores/dynamodb-table.ts).
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "../stores/dynamodb-store";
import { recoveryJobs } from "./recovery-jobs";
import { IDEMPOTENCY_TABLE as TABLE } from "./table";
import type { OpenedDatabase } from "./variants";

/** Where the records live: DynamoDB. */
export type Database = DynamoDBClient;
/** DynamoDbStore runs no transactions of the app's client: `executeInTransaction` is not offered. */
export type Transaction = unknown;
/** The table, unless IDEMPOTENCY_TABLE names another (one per stage, say). */
export const IDEMPOTENCY_TABLE = process.env.IDEMPOTENCY_TABLE ?? TABLE;

/** Region, credentials and endpoint come from the AWS SDK's own settings (AWS_REGION, a role or profile; AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local, as for `blocks migrate --apply`). */
export function connectDatabase(): Database {
  return new DynamoDBClient({});
}

/** Records expire by themselves (TTL): the maintenance is recovery only, safe from several instances at once (no lock). */
export function openDatabase(db: Database): OpenedDatabase<Transaction> {
  return {
    store: new DynamoDbStore(db, { table: IDEMPOTENCY_TABLE }),
    jobs: (handler, logger) => recoveryJobs(handler, logger),
    end: () => {
      db.destroy();
      return Promise.resolve();
    },
  };
}
