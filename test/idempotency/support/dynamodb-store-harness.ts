// DynamoDbStore for the shared suites, on dynalite (a local DynamoDB from npm) started in this process.
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import dynalite from "dynalite";
import { DynamoDbStore } from "@/blocks/idempotency/stores/dynamodb-store";
import { dynamoDbTableDefinition } from "@/blocks/idempotency/stores/dynamodb-table";
import type { StoreHarness, StoreKind } from "./store-harness";

export type LocalDynamoDb = { client: DynamoDBClient; endpoint: string; close(): Promise<void> };

/** dynalite on a free loopback port, tables created at once (no CREATING phase). It has no TTL: nothing expires by itself. */
export async function startLocalDynamoDb(): Promise<LocalDynamoDb> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
  });
  return {
    client,
    endpoint,
    async close() {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A store on its own new table, with a clock the test moves: DynamoDB has no server clock, so the store reads `now`. */
export async function freshDynamoDbStore(client: DynamoDBClient, options: { indexShards?: number } = {}): Promise<StoreHarness & { store: DynamoDbStore }> {
  const table = `idem_${randomUUID().slice(0, 8)}`;
  await client.send(new CreateTableCommand(dynamoDbTableDefinition(table).createTable));
  let offset = 0;
  const store = new DynamoDbStore(client, { table, now: () => Date.now() + offset, ...options });
  return {
    store,
    advanceTime: async (ms) => void (offset += ms),
    close: async () => void (await client.send(new DeleteTableCommand({ TableName: table }))),
  };
}

export const dynamoDbStoreKind: StoreKind = {
  name: "DynamoDbStore (dynalite, in process)",
  expiresByItself: true,
  async open() {
    const local = await startLocalDynamoDb();
    return { fresh: () => freshDynamoDbStore(local.client), close: () => local.close() };
  },
};
