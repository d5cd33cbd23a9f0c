// The one source of DynamoDbStore's table: the CreateTable and UpdateTimeToLive inputs, as plain objects.
import type { CreateTableCommandInput, UpdateTimeToLiveCommandInput } from "@aws-sdk/client-dynamodb";

/** The sparse index of running executions: only PROCESSING items carry its partition key. */
export const PROCESSING_INDEX = "processing";

/**
 * What to send once per table (by hand, from a deploy script, or translated to CloudFormation/CDK).
 * - `pk`: the item's key: "R#<scope>" for a record, "N#<scope>" for its retry counter.
 * - index `processing`: partition `shard` (set only while PROCESSING, so the index stays small),
 *   sort `updatedAt` (the last heartbeat), so recovery reads the oldest first with a bounded Query.
 * - TTL on `ttl` (epoch seconds): DynamoDB deletes expired items for free, some time after expiry;
 *   the store never depends on it, because every read treats an expired item as absent.
 *
 * @example
 * const { createTable, updateTimeToLive } = dynamoDbTableDefinition("idempotency_records");
 * await client.send(new CreateTableCommand(createTable));
 * await client.send(new UpdateTimeToLiveCommand(updateTimeToLive));
 */
export function dynamoDbTableDefinition(table = "idempotency_records"): {
  createTable: CreateTableCommandInput;
  updateTimeToLive: UpdateTimeToLiveCommandInput;
} {
  return {
    createTable: {
      TableName: table,
      BillingMode: "PAY_PER_REQUEST",
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" },
        { AttributeName: "shard", AttributeType: "N" },
        { AttributeName: "updatedAt", AttributeType: "N" },
      ],
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
      GlobalSecondaryIndexes: [
        {
          IndexName: PROCESSING_INDEX,
          KeySchema: [
            { AttributeName: "shard", KeyType: "HASH" },
            { AttributeName: "updatedAt", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: ["token"] },
        },
      ],
    },
    updateTimeToLive: {
      TableName: table,
      TimeToLiveSpecification: { AttributeName: "ttl", Enabled: true },
    },
  };
}
