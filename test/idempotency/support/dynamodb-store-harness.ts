// DynamoDbStore for the shared suites, on dynalite (a local DynamoDB from npm) started in this process.
import { randomUUID } from "node:crypto";
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "@/blocks/idempotency/stores/dynamodb-store";
import { dynamoDbTableDefinition } from "@/blocks/idempotency/stores/dynamodb-table";
import { startLocalDynamoDb } from "./local-dynamodb";
import type { StoreHarness, StoreKind } from "./store-harness";

export { startLocalDynamoDb, type LocalDynamoDb } from "./local-dynamodb";

/** A store on its own new table, with a clock the test moves: DynamoDB has no server clock, so the store reads `now`. */
export async function freshDynamoDbStore(
  client: DynamoDBClient,
  options: { indexShards?: number } = {},
): Promise<StoreHarness & { store: DynamoDbStore }> {
  const table = `idem_${randomUUID().slice(0, 8)}`;
  await client.send(new CreateTableCommand(dynamoDbTableDefinition(table).createTable));
  await untilActive(client, table);
  let offset = 0;
  const store = new DynamoDbStore(client, { table, now: () => Date.now() + offset, ...options });
  return {
    store,
    advanceTime: async (ms) => void (offset += ms),
    close: async () => void (await client.send(new DeleteTableCommand({ TableName: table }))),
  };
}

/** CreateTable answers while the table is still CREATING (dynalite too, for a moment): a put before ACTIVE is ResourceNotFound. */
async function untilActive(client: DynamoDBClient, table: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: table }));
    if (Table?.TableStatus === "ACTIVE") return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`DynamoDB table ${table} did not become ACTIVE within 2 s.`);
}

export const dynamoDbStoreKind: StoreKind = {
  name: "DynamoDbStore (dynalite, in process)",
  expiresByItself: true,
  async open() {
    const local = await startLocalDynamoDb();
    return { fresh: () => freshDynamoDbStore(local.client), close: () => local.close() };
  },
};
