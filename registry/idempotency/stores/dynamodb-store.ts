// DynamoDbStore: the IdempotencyStore contract on DynamoDB (AWS SDK v3), through conditional writes.
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type {
  CreateInput,
  CreateResult,
  IdempotencyRecord,
  IdempotencyScope,
  IdempotencyStore,
  RecoveredRecord,
  RecoverInput,
} from "../types";
import { DynamoDbCounters } from "./dynamodb-counters";
import {
  conditional,
  expiry,
  expiryValues,
  isConditionFailure,
  namesIn,
  pick,
  recordKey,
  toRecord,
  unmarshalled,
  type Item,
} from "./dynamodb-items";
import { oldestStuck, recoverOne, type ClaimingStore } from "./dynamodb-recovery";

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
  /** The counter item beside each record: its retry count and steps. */
  private readonly counters: DynamoDbCounters;

  constructor(client: DynamoDBClient | DynamoDBDocumentClient, options: DynamoDbStoreOptions = {}) {
    this.db = client instanceof DynamoDBDocumentClient ? client : DynamoDBDocumentClient.from(client);
    this.table = options.table ?? "idempotency_records";
    this.indexShards = options.indexShards ?? 8;
    this.now = options.now ?? Date.now;
    this.counters = new DynamoDbCounters(this.db, this.table, this.now);
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
              ...expiry(now, ttlMs),
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
    const [item, counter] = await Promise.all([this.read(scope), this.counters.read(scope)]);
    if (!item || item.expiresAt <= this.now()) return undefined;
    return { ...toRecord(scope, item), steps: this.counters.stepsOf(counter, item.requestHash) };
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
      const [item, counter] = await Promise.all([this.read(scope), this.counters.read(scope)]);
      if (!item || item.status !== "PROCESSING" || item.token !== token || item.expiresAt <= now) return false;
      const step = { requestHash: item.requestHash, name, result };
      if (await this.counters.writeStep(scope, counter, step, now, ttlMs)) return true;
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
      values: { ":done": status, ...expiryValues(now, ttlMs), ...body.values },
    });
  }

  async release(scope: IdempotencyScope, token: string): Promise<boolean> {
    return conditional(
      this.db,
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
      values: expiryValues(now, ttlMs),
    });
    return extended || this.fenced(scope, token, now, { UpdateExpression: "SET #updatedAt = :now", values: {} });
  }

  async incrementRetryCount(scope: IdempotencyScope, ttlMs: number): Promise<number> {
    return this.counters.increment(scope, ttlMs);
  }

  /**
   * Queries each shard of the sparse `processing` index for its oldest heartbeats, takes the `limit`
   * oldest in all, and claims each before it counts the retry and poisons or frees it (dynamodb-recovery.ts).
   */
  async recoverStuckRecords({ olderThanMs, limit, maxRetries, ttlMs }: RecoverInput): Promise<RecoveredRecord[]> {
    if (limit <= 0) return [];
    const cutoff = this.now() - olderThanMs;
    const stuck = await oldestStuck(this.db, this.table, this.indexShards, cutoff, limit);
    const recovered = await Promise.all(stuck.map((item) => recoverOne(this.claims, item, cutoff, maxRetries, ttlMs)));
    return recovered.flatMap((record) => (record ? [record] : []));
  }

  /** Recovery's claim, fenced like every mark: see dynamodb-recovery.ts. */
  private readonly claims: ClaimingStore = {
    claim: (scope, token, claim, cutoff) =>
      this.fenced(scope, token, this.now(), {
        UpdateExpression: "SET #token = :claim, #updatedAt = :now",
        condition: " AND #updatedAt < :cutoff",
        values: { ":claim": claim, ":cutoff": cutoff },
      }),
    incrementRetryCount: (scope, ttlMs) => this.incrementRetryCount(scope, ttlMs),
    markFailed: (scope, token, ttlMs) => this.markFailed(scope, token, ttlMs),
    release: (scope, token) => this.release(scope, token),
  };

  /** Nothing to do: DynamoDB's TTL deletes expired items, and every read here already ignores them. */
  cleanupExpiredRecords(): Promise<number> {
    return Promise.resolve(0);
  }

  /** A conditional update of a PROCESSING record held by `token` (and not expired). */
  private fenced(
    scope: IdempotencyScope,
    token: string,
    now: number,
    update: { UpdateExpression: string; condition?: string; values: Record<string, unknown> },
  ) {
    const expression = `${update.UpdateExpression} ${HELD}${update.condition ?? ""}`;
    return conditional(
      this.db,
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

  private async read(scope: IdempotencyScope): Promise<Item | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: recordKey(scope) }, ConsistentRead: true }),
    );
    return Item as Item | undefined;
  }
}
