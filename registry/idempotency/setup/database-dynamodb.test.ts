// Checks this app's idempotency wiring on DynamoDB (AWS_ENDPOINT_URL_DYNAMODB, e.g. DynamoDB Local): one run per key, maintenance, a clean close.
import { CreateTableCommand, ResourceInUseException, waitUntilTableExists } from "@aws-sdk/client-dynamodb";
import { it } from "vitest";
import { dynamoDbTableDefinition } from "../stores/dynamodb-table";
import { checkWiring } from "./testing/check-wiring";
import * as database from "./database-dynamodb";

it.skipIf(!process.env.AWS_ENDPOINT_URL_DYNAMODB)(
  "runs an operation once per key, runs the maintenance jobs, and closes without closing the app's client (needs AWS_ENDPOINT_URL_DYNAMODB)",
  async () => {
    const db = database.connectDatabase();
    const { createTable } = dynamoDbTableDefinition(database.IDEMPOTENCY_TABLE);
    await db.send(new CreateTableCommand(createTable)).catch((err: unknown) => {
      if (!(err instanceof ResourceInUseException)) throw err;
    });
    await waitUntilTableExists({ client: db, maxWaitTime: 60 }, { TableName: database.IDEMPOTENCY_TABLE });
    await checkWiring(database, db, { transactions: false });
  },
  30_000,
);
