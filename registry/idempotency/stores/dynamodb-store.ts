// DynamoDbStore: the IdempotencyStore contract on DynamoDB (AWS SDK v3), through conditional writes.
import { randomUUID } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type {
  CreateInput,
  CreateResult,
  IdempotencyRecord,
  IdempotencyScope,
  IdempotencyStore,
  RecoveredRecord,
  RecoverInput,
} from "../types";
import {
  counterKey,
  fromKey,
  isConditionFailure,
  namesIn,
  pick,
  recordKey,
  toRecord,
  unmarshalled,
  type CounterItem,
  type Item,
} from "./dynamodb-items";
import { PROCESSING_INDEX } from "./dynamodb-table";

/** How `markStep` writes into the counter item as it was read: add to this request's steps, or replace another's. */
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

export type DynamoDbStoreOptions = {
  /** @default "idempotency_records" (create it from `dynamoDbTableDefinition`) */
  table?: string | undefined;
  /**
   * Partitions of the `processing` index. Each takes about 1 000 writes/s, and recovery queries
   * each one, so raise it only for that many first requests per second. @default 8
   */
  indexShards?: number | undefined;
  /** The clock, in epoch milliseconds; tests pass a fake one. @default Date.now */
  now?: (() => number) | undefined;
};

const HELD = "#status = :processing AND #token = :token AND #expiresAt > :now";
const CREATE_ATTEMPTS = 5;

/**
 * DynamoDB has no server clock an expression can read, so times come from this process's clock
 * (`now`): keep app servers on NTP; drift shifts expiry and recovery by as much, never fencing.
 *
 * @example
 * const store = new DynamoDbStore(new DynamoDBClient({}), { table: "idempotency_records" });
 */
export class DynamoDbStore implements IdempotencyStore {
  readonly table: string;
  private readonly db: DynamoDBDocumentClient;
  private readonly indexShards: number;
  private readonly now: () => number;

  constructor(client: DynamoDBClient | DynamoDBDocumentClient, options: DynamoDbStoreOptions = {}) {
    this.db = client instanceof DynamoDBDocumentClient ? client : DynamoDBDocumentClient.from(client);
    this.table = options.table ?? "idempotency_records";
    this.indexShards = options.indexShards ?? 8;
    this.now = options.now ?? Date.now;
  }

  async create({ scope, requestHash, ttlMs, token }: CreateInput): Promise<CreateResult> {
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      const now = this.now();
      try {
        // An item past its expiry is free (TTL deletes lazily): the put may take it over.
        await this.db.send(
          new PutCommand({
            TableName: this.table,
            Item: {
              pk: recordKey(scope),
              requestHash,
              status: "PROCESSING",
              token,
              updatedAt: now,
              shard: Math.floor(Math.random() * this.indexShards),
              ...this.expiry(now, ttlMs),
            },
            ConditionExpression: "attribute_not_exists(pk) OR #expiresAt <= :now",
            ExpressionAttributeNames: { "#expiresAt": "expiresAt" },
            ExpressionAttributeValues: { ":now": now },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        return { status: "CREATED" };
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        // DynamoDB returns the winner with the failure (one round trip); local emulators may not.
        const winner = (err as { Item?: Record<string, unknown> }).Item ? unmarshalled(err) : await this.read(scope);
        if (winner && winner.expiresAt > this.now()) return { status: "DUPLICATE", record: toRecord(scope, winner) };
      }
    }
    throw new Error(
      `DynamoDbStore.create: the record for key "${scope.key}" kept changing; gave up after ${CREATE_ATTEMPTS} attempts.`,
    );
  }

  /** The record and its counter item (the steps), read in parallel. */
  async get(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const [item, counter] = await Promise.all([this.read(scope), this.readCounter(scope)]);
    if (!item || item.expiresAt <= this.now()) return undefined;
    return { ...toRecord(scope, item), steps: this.stepsOf(counter, item.requestHash) };
  }

  /**
   * Two round trips: the record and its counter item are read, then the step is written into the
   * counter item under the condition that it is still as read (else it reads again). The fence is
   * that read of the record: one that is released or taken between it and the write can get a step
   * recorded under its own request hash, which is still a true result of that request, and another
   * request hash never sees it. (`create` does not read the steps: a conditional put returns nothing
   * on success, so the execution reads them with `get` on its first step.)
   */
  async markStep(
    scope: IdempotencyScope,
    token: string,
    name: string,
    result: string,
    ttlMs: number,
  ): Promise<boolean> {
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      const now = this.now();
      const [item, counter] = await Promise.all([this.read(scope), this.readCounter(scope)]);
      if (!item || item.status !== "PROCESSING" || item.token !== token || item.expiresAt <= now) return false;
      const update = stepUpdate(counter && counter.expiresAt > now ? counter : undefined, item.requestHash);
      const expression = `${update.set}, #expiresAt = :expiresAt, #ttl = :ttl`;
      const values: Record<string, unknown> = {
        ":now": now,
        ":hash": item.requestHash,
        ":result": result,
        ":steps": { [name]: result },
        ":zero": 0,
        ":old": counter?.stepsHash,
        ...this.expiryValues(now, ttlMs),
      };
      const used = `${expression} ${update.condition}`;
      const written = await this.conditional(
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
      if (written) return true;
    }
    throw new Error(
      `DynamoDbStore.markStep: the steps of key "${scope.key}" kept changing; gave up after ${CREATE_ATTEMPTS} tries.`,
    );
  }

  async markSuccess(scope: IdempotencyScope, token: string, response: string | null, ttlMs: number): Promise<boolean> {
    return this.complete(scope, token, "SUCCESS", response, ttlMs);
  }

  async markFailed(
    scope: IdempotencyScope,
    token: string,
    ttlMs: number,
    response: string | null = null,
  ): Promise<boolean> {
    return this.complete(scope, token, "FAILED", response, ttlMs);
  }

  /** Ends the holder's execution with its outcome, keeping the response (success or failure) when there is one. */
  private complete(
    scope: IdempotencyScope,
    token: string,
    status: "SUCCESS" | "FAILED",
    response: string | null,
    ttlMs: number,
  ): Promise<boolean> {
    const now = this.now();
    const body =
      response === null
        ? { set: "", remove: ", #response", values: {} }
        : { set: ", #response = :response", remove: "", values: { ":response": response } };
    return this.fenced(scope, token, now, {
      UpdateExpression: `SET #status = :done, #updatedAt = :now, #expiresAt = :expiresAt, #ttl = :ttl${body.set} REMOVE #shard${body.remove}`,
      values: { ":done": status, ...this.expiryValues(now, ttlMs), ...body.values },
    });
  }

  async release(scope: IdempotencyScope, token: string): Promise<boolean> {
    return this.conditional(
      new DeleteCommand({
        TableName: this.table,
        Key: { pk: recordKey(scope) },
        ConditionExpression: HELD,
        ExpressionAttributeNames: pick("#status", "#token", "#expiresAt"),
        ExpressionAttributeValues: { ":processing": "PROCESSING", ":token": token, ":now": this.now() },
      }),
    );
  }

  /** Extends the expiry only forward: an expression cannot take a max, so a second write renews the lease alone. */
  async heartbeat(scope: IdempotencyScope, token: string, ttlMs = 0): Promise<boolean> {
    const now = this.now();
    const extended = await this.fenced(scope, token, now, {
      UpdateExpression: "SET #updatedAt = :now, #expiresAt = :expiresAt, #ttl = :ttl",
      condition: " AND #expiresAt < :expiresAt",
      values: this.expiryValues(now, ttlMs),
    });
    return extended || this.fenced(scope, token, now, { UpdateExpression: "SET #updatedAt = :now", values: {} });
  }

  async incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number> {
    for (;;) {
      const now = this.now();
      const values = { ":now": now, ":one": 1, ...this.expiryValues(now, ttlMs) };
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
        await this.conditional(
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

  /**
   * Queries each shard of the sparse `processing` index for its oldest heartbeats, takes the `limit`
   * oldest in all, and claims each with a conditional write (a new token: the stale owner is fenced
   * off, and a concurrent recovery's claim fails). Then counts the retry and poisons or frees it.
   * A crash after the claim leaves it PROCESSING in the index: a later run recovers it again.
   */
  async recoverStuckRecords({ olderThanMs, limit, maxRetries, ttlMs }: RecoverInput): Promise<RecoveredRecord[]> {
    if (limit <= 0) return [];
    const now = this.now();
    const pages = await Promise.all(
      Array.from({ length: this.indexShards }, (_, shard) =>
        this.db.send(
          new QueryCommand({
            TableName: this.table,
            IndexName: PROCESSING_INDEX,
            Limit: limit,
            KeyConditionExpression: "#shard = :shard AND #updatedAt < :cutoff",
            ExpressionAttributeNames: pick("#shard", "#updatedAt"),
            ExpressionAttributeValues: { ":shard": shard, ":cutoff": now - olderThanMs },
          }),
        ),
      ),
    );
    const stuck = pages
      .flatMap((page) => (page.Items ?? []) as Array<Pick<Item, "pk" | "token" | "updatedAt">>)
      .sort((a, b) => a.updatedAt - b.updatedAt)
      .slice(0, limit);
    const recovered = await Promise.all(
      stuck.map((item) => this.recoverOne(item, now - olderThanMs, maxRetries, ttlMs)),
    );
    return recovered.flatMap((record) => (record ? [record] : []));
  }

  /** Nothing to do: DynamoDB's TTL deletes expired items, and every read here already ignores them. */
  cleanupExpiredRecords(_input: { limit: number }): Promise<number> {
    return Promise.resolve(0);
  }

  private async recoverOne(
    item: Pick<Item, "pk" | "token">,
    cutoff: number,
    maxRetries: number,
    ttlMs: number,
  ): Promise<RecoveredRecord | undefined> {
    const scope = fromKey(item.pk);
    const claim = randomUUID();
    const now = this.now();
    const claimed = await this.fenced(scope, item.token, now, {
      UpdateExpression: "SET #token = :claim, #updatedAt = :now",
      condition: " AND #updatedAt < :cutoff",
      values: { ":claim": claim, ":cutoff": cutoff },
    });
    if (!claimed) return undefined;
    const retryCount = await this.incrementRetryCount(scope, ttlMs);
    const poisoned = retryCount >= maxRetries;
    if (poisoned) await this.markFailed(scope, claim, ttlMs);
    else await this.release(scope, claim);
    return { ...scope, retryCount, poisoned };
  }

  /** A conditional update of a PROCESSING record held by `token` (and not expired). */
  private fenced(
    scope: IdempotencyScope,
    token: string,
    now: number,
    update: { UpdateExpression: string; condition?: string; values: Record<string, unknown> },
  ) {
    const expression = `${update.UpdateExpression} ${HELD}${update.condition ?? ""}`;
    return this.conditional(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: recordKey(scope) },
        UpdateExpression: update.UpdateExpression,
        ConditionExpression: `${HELD}${update.condition ?? ""}`,
        ExpressionAttributeNames: namesIn(expression),
        ExpressionAttributeValues: { ":processing": "PROCESSING", ":token": token, ":now": now, ...update.values },
      }),
    );
  }

  /** True when the write happened, false when its condition did not hold. */
  private async conditional(command: UpdateCommand | DeleteCommand): Promise<boolean> {
    try {
      await this.db.send(command as UpdateCommand);
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  private async read(scope: IdempotencyScope): Promise<Item | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: recordKey(scope) }, ConsistentRead: true }),
    );
    return Item as Item | undefined;
  }

  private async readCounter(scope: IdempotencyScope): Promise<CounterItem | undefined> {
    const read = new GetCommand({ TableName: this.table, Key: { pk: counterKey(scope) }, ConsistentRead: true });
    return (await this.db.send(read)).Item as CounterItem | undefined;
  }

  private stepsOf(counter: CounterItem | undefined, requestHash: string): Record<string, string> {
    return counter?.steps && counter.stepsHash === requestHash && counter.expiresAt > this.now() ? counter.steps : {};
  }

  private expiry(now: number, ttlMs: number) {
    return { expiresAt: now + ttlMs, ttl: Math.ceil((now + ttlMs) / 1000) };
  }

  private expiryValues(now: number, ttlMs: number) {
    const { expiresAt, ttl } = this.expiry(now, ttlMs);
    return { ":expiresAt": expiresAt, ":ttl": ttl };
  }
}
