// DynamoDbStore beyond the shared contract: lazy TTL, the one-call duplicate, the sparse index and the table definition.
import { randomUUID } from "node:crypto";
import { DynamoDBClient, GetItemCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROCESSING_INDEX, dynamoDbTableDefinition } from "@/blocks/idempotency/stores/dynamodb-table";
import { freshDynamoDbStore, startLocalDynamoDb, type LocalDynamoDb } from "./support/dynamodb-store-harness";

const scope = () => ({ operation: "payments:create", userId: "u_1", key: randomUUID() });

describe("DynamoDbStore on dynalite", () => {
  let local: LocalDynamoDb;
  beforeAll(async () => {
    local = await startLocalDynamoDb();
  });
  afterAll(async () => local.close());

  const rawItem = async (table: string, pk: string) =>
    (await local.client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true })))
      .Item;

  it("treats an item past its expiry as absent while it is still in the table (TTL deletes lazily, dynalite never)", async () => {
    const harness = await freshDynamoDbStore(local.client);
    const s = scope();
    const pk = `R#${JSON.stringify([s.operation, s.userId, s.key])}`;
    const first = randomUUID();
    expect(await harness.store.create({ scope: s, requestHash: "a", ttlMs: 1_000, token: first })).toMatchObject({
      status: "CREATED",
    });
    expect(await harness.store.incrementRetryCount(s, 1_000)).toBe(1);
    await harness.advanceTime(1_001);

    expect(await rawItem(harness.store.table, pk)).toMatchObject({ token: { S: first } });
    expect(await harness.store.get(s)).toBeUndefined();
    expect(await harness.store.markSuccess(s, first, '"late"', 1_000)).toBe(false);
    expect(await harness.store.incrementRetryCount(s, 1_000)).toBe(1);
    const second = randomUUID();
    expect(await harness.store.create({ scope: s, requestHash: "b", ttlMs: 1_000, token: second })).toMatchObject({
      status: "CREATED",
    });
    expect(await harness.store.get(s)).toMatchObject({ requestHash: "b", status: "PROCESSING", token: second });
    await harness.close();
  });

  it("answers a duplicate in one call when DynamoDB returns the winning item with the failed condition", async () => {
    // dynalite ignores ReturnValuesOnConditionCheckFailure; this client adds the item to the error as DynamoDB does.
    const client = new DynamoDBClient({
      endpoint: local.endpoint,
      region: "local",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
    let calls = 0;
    client.middlewareStack.add((next) => async (args) => (calls++, next(args)), {
      step: "initialize",
      name: "countCalls",
    });
    client.middlewareStack.add(
      (next) => async (args) => {
        try {
          return await next(args);
        } catch (err) {
          const input = args.input as {
            TableName: string;
            Item: { pk: string | { S: string } };
            ReturnValuesOnConditionCheckFailure?: string;
          };
          if (
            (err as Error).name === "ConditionalCheckFailedException" &&
            input.ReturnValuesOnConditionCheckFailure === "ALL_OLD"
          ) {
            const pk = typeof input.Item.pk === "string" ? input.Item.pk : input.Item.pk.S;
            Object.assign(err as object, { Item: await rawItem(input.TableName, pk) });
          }
          throw err;
        }
      },
      { step: "initialize", name: "returnOldItem" },
    );
    const harness = await freshDynamoDbStore(client);
    const s = scope();
    const token = randomUUID();
    await harness.store.create({ scope: s, requestHash: "a", ttlMs: 60_000, token });
    await harness.store.markSuccess(s, token, '{"z":1,"a":2}', 60_000);
    calls = 0;
    const duplicate = await harness.store.create({ scope: s, requestHash: "b", ttlMs: 60_000, token: randomUUID() });
    expect(calls).toBe(1);
    expect(duplicate).toEqual({
      status: "DUPLICATE",
      record: expect.objectContaining({ ...s, requestHash: "a", status: "SUCCESS", response: '{"z":1,"a":2}', token }),
    });
    await harness.close();
    client.destroy();
  });

  it("keeps only PROCESSING items in the sparse index that recovery queries", async () => {
    const harness = await freshDynamoDbStore(local.client);
    const [running, done, released] = [scope(), scope(), scope()];
    const tokens = await Promise.all(
      [running, done, released].map(async (s) => {
        const token = randomUUID();
        await harness.store.create({ scope: s, requestHash: "h", ttlMs: 60_000, token });
        return token;
      }),
    );
    await harness.store.markSuccess(done, tokens[1] as string, null, 60_000);
    await harness.store.release(released, tokens[2] as string);
    const indexed = await local.client.send(
      new ScanCommand({ TableName: harness.store.table, IndexName: PROCESSING_INDEX }),
    );
    expect(indexed.Items?.map((item) => item.pk?.S)).toEqual([
      `R#${JSON.stringify([running.operation, running.userId, running.key])}`,
    ]);
    await harness.close();
  });

  it("emits the table definition as plain data: key, sparse index, TTL attribute", () => {
    const { createTable, updateTimeToLive } = dynamoDbTableDefinition("payments_idempotency");
    expect(JSON.parse(JSON.stringify({ createTable, updateTimeToLive }))).toEqual({ createTable, updateTimeToLive });
    expect(createTable).toMatchObject({
      TableName: "payments_idempotency",
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
    });
    expect(createTable.GlobalSecondaryIndexes?.[0]).toMatchObject({
      IndexName: "processing",
      KeySchema: [{ AttributeName: "shard" }, { AttributeName: "updatedAt" }],
    });
    expect(updateTimeToLive).toEqual({
      TableName: "payments_idempotency",
      TimeToLiveSpecification: { AttributeName: "ttl", Enabled: true },
    });
  });
});
