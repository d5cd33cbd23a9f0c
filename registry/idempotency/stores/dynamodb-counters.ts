// DynamoDbStore's counter items: beside each record, its retry count and the steps its request hash recorded.
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { IdempotencyScope } from "../types";
import {
  conditional,
  counterKey,
  expiryValues,
  isConditionFailure,
  namesIn,
  pick,
  type CounterItem,
} from "./dynamodb-items";

/** How `writeStep` writes into the counter item as it was read: add to this request's steps, or replace another's. */
function stepUpdate(live: CounterItem | undefined, requestHash: string): { set: string; condition: string } {
  if (live?.stepsHash === requestHash) {
    return { set: "SET #steps.#name = :result", condition: "#stepsHash = :hash AND #expiresAt > :now" };
  }
  const unchanged = live?.stepsHash === undefined ? "attribute_not_exists(#stepsHash)" : "#stepsHash = :old";
  if (live) return { set: "SET #steps = :steps, #stepsHash = :hash", condition: `#expiresAt > :now AND ${unchanged}` };
  // Absent or expired: a new counter, whose retries start again like the key's.
  return {
    set: "SET #steps = :steps, #stepsHash = :hash, #count = :zero",
    condition: "attribute_not_exists(pk) OR #expiresAt <= :now",
  };
}

/** One step's result, as `markStep` records it for the request hash holding the key. */
export type Step = { requestHash: string; name: string; result: string };

/** The counter items ("N#<scope>") of one table, on the store's clock. */
export class DynamoDbCounters {
  private readonly db: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly now: () => number;

  constructor(db: DynamoDBDocumentClient, table: string, now: () => number) {
    this.db = db;
    this.table = table;
    this.now = now;
  }

  async read(scope: IdempotencyScope): Promise<CounterItem | undefined> {
    const read = new GetCommand({ TableName: this.table, Key: { pk: counterKey(scope) }, ConsistentRead: true });
    return (await this.db.send(read)).Item as CounterItem | undefined;
  }

  stepsOf(counter: CounterItem | undefined, requestHash: string): Record<string, string> {
    return counter?.steps && counter.stepsHash === requestHash && counter.expiresAt > this.now() ? counter.steps : {};
  }

  /** Writes `step` into the counter item under the condition that it is still as read (`counter`, at `now`): false when it changed. */
  writeStep(
    scope: IdempotencyScope,
    counter: CounterItem | undefined,
    { requestHash, name, result }: Step,
    now: number,
    ttlMs: number,
  ): Promise<boolean> {
    const update = stepUpdate(counter && counter.expiresAt > now ? counter : undefined, requestHash);
    const expression = `${update.set}, #expiresAt = :expiresAt, #ttl = :ttl`;
    const values: Record<string, unknown> = {
      ":now": now,
      ":hash": requestHash,
      ":result": result,
      ":steps": { [name]: result },
      ":zero": 0,
      ":old": counter?.stepsHash,
      ...expiryValues(now, ttlMs),
    };
    const used = `${expression} ${update.condition}`;
    return conditional(
      this.db,
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: counterKey(scope) },
        UpdateExpression: expression,
        ConditionExpression: update.condition,
        ExpressionAttributeNames: { ...namesIn(used), ...(used.includes("#name") ? { "#name": name } : {}) },
        // DynamoDB rejects values an expression does not use.
        ExpressionAttributeValues: Object.fromEntries(
          Object.entries(values).filter(([value]) => new RegExp(`${value}\\b`).test(used)),
        ),
      }),
    );
  }

  /** Adds one to the retry count and returns it: a live (or absent) counter goes up, an expired one starts again at 1. */
  async increment(scope: IdempotencyScope, ttlMs: number): Promise<number> {
    for (;;) {
      const now = this.now();
      const values = { ":now": now, ":one": 1, ...expiryValues(now, ttlMs) };
      const names = pick("#count", "#expiresAt", "#ttl");
      try {
        // A live (or absent) counter goes up by one...
        const { Attributes } = await this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: counterKey(scope) },
            ReturnValues: "UPDATED_NEW",
            UpdateExpression: "SET #count = if_not_exists(#count, :zero) + :one, #expiresAt = :expiresAt, #ttl = :ttl",
            ConditionExpression: "attribute_not_exists(pk) OR #expiresAt > :now",
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ...values, ":zero": 0 },
          }),
        );
        return Attributes?.count as number;
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
      }
      // ...an expired one, which TTL has not deleted yet, starts again at 1.
      if (
        await conditional(
          this.db,
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: counterKey(scope) },
            UpdateExpression: "SET #count = :one, #expiresAt = :expiresAt, #ttl = :ttl",
            ConditionExpression: "#expiresAt <= :now",
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        )
      )
        return 1;
    }
  }
}
