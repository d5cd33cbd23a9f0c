// How DynamoDbStore lays out and writes its items: keys, attribute names, expiry, conditional writes, the mapping back to records.
import type { DeleteCommand, DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { IdempotencyRecord, IdempotencyScope } from "../types";

/**
 * A record's item. Its retry counter is another item ("N#<scope>") with `count`, `expiresAt` and
 * `ttl`, and the recovery points: `steps` (name -> result JSON) of the request hash `stepsHash`.
 */
export type Item = {
  pk: string;
  requestHash: string;
  status: IdempotencyRecord["status"];
  response?: string;
  token: string;
  expiresAt: number;
  updatedAt: number;
};

/** Every attribute through a placeholder: `status`, `token`, `ttl` and `count` are reserved words. */
export const NAMES = {
  "#status": "status",
  "#token": "token",
  "#expiresAt": "expiresAt",
  "#updatedAt": "updatedAt",
  "#ttl": "ttl",
  "#shard": "shard",
  "#response": "response",
  "#count": "count",
  "#steps": "steps",
  "#stepsHash": "stepsHash",
};

/** The counter item, as `get` and `markStep` read it. */
export type CounterItem = { count?: number; expiresAt: number; steps?: Record<string, string>; stepsHash?: string };

export function recordKey({ operation, userId, key }: IdempotencyScope): string {
  return `R#${JSON.stringify([operation, userId, key])}`;
}

export function counterKey({ operation, userId, key }: IdempotencyScope): string {
  return `N#${JSON.stringify([operation, userId, key])}`;
}

export function fromKey(pk: string): IdempotencyScope {
  const [operation, userId, key] = JSON.parse(pk.slice(2)) as [string, string, string];
  return { operation, userId, key };
}

export function pick(...names: Array<keyof typeof NAMES>): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, NAMES[name]]));
}

/** DynamoDB rejects placeholders an expression does not use, so pass exactly the ones it names. */
export function namesIn(expression: string): Record<string, string> {
  return pick(
    ...(Object.keys(NAMES) as Array<keyof typeof NAMES>).filter((name) => new RegExp(`${name}\\b`).test(expression)),
  );
}

export function isConditionFailure(err: unknown): boolean {
  return (err as { name?: string } | null)?.name === "ConditionalCheckFailedException";
}

/** True when the write happened, false when its condition did not hold. */
export async function conditional(
  db: DynamoDBDocumentClient,
  command: UpdateCommand | DeleteCommand,
): Promise<boolean> {
  try {
    await db.send(command as UpdateCommand);
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

/** The expiry every write sets: `expiresAt` (epoch ms), which every read compares, and `ttl` (epoch s) for DynamoDB's TTL. */
export function expiry(now: number, ttlMs: number) {
  return { expiresAt: now + ttlMs, ttl: Math.ceil((now + ttlMs) / 1000) };
}

/** `expiry` as an expression's values. */
export function expiryValues(now: number, ttlMs: number) {
  const { expiresAt, ttl } = expiry(now, ttlMs);
  return { ":expiresAt": expiresAt, ":ttl": ttl };
}

/** The item a failed condition returned, in attribute-value form (the document client leaves errors as they are). */
export function unmarshalled(err: unknown): Item | undefined {
  const raw = (err as { Item?: Record<string, { S?: string; N?: string }> }).Item;
  if (!raw) return undefined;
  const text = (name: string) => raw[name]?.S;
  const number = (name: string) => Number(raw[name]?.N);
  return {
    pk: text("pk") as string,
    requestHash: text("requestHash") as string,
    status: text("status") as Item["status"],
    ...(raw.response?.S !== undefined ? { response: raw.response.S } : {}),
    token: text("token") as string,
    expiresAt: number("expiresAt"),
    updatedAt: number("updatedAt"),
  };
}

export function toRecord(scope: IdempotencyScope, item: Item): IdempotencyRecord {
  return {
    operation: scope.operation,
    userId: scope.userId,
    key: scope.key,
    requestHash: item.requestHash,
    status: item.status,
    response: item.response ?? null,
    token: item.token,
    expiresAt: new Date(item.expiresAt),
    updatedAt: new Date(item.updatedAt),
  };
}
