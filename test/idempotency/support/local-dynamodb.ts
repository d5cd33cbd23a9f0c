// dynalite, a local DynamoDB from npm, started in this process; no path alias, so the e2e suite can use it too.
import type { AddressInfo } from "node:net";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import dynalite from "dynalite";

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
