// How RedisStore reads back what its scripts wrote: a record (string layout, or the older hash), its steps, an index member.
import type { IdempotencyRecord, IdempotencyScope, StepResults } from "../types";

/** A record of the hash layout (written before the string layout), as HMGET answers its fields. */
export type Fields = [string | null, string | null, string | null, string | null, string | null, string | null];

const STATUS = { P: "PROCESSING", S: "SUCCESS", F: "FAILED" } as const;

/** A record of the string layout (see redis-store-scripts.ts); lengths are the app's own, in UTF-16 units. */
export function parseRecord(scope: IdempotencyScope, value: string): IdempotencyRecord {
  const status = STATUS[value[0] as keyof typeof STATUS];
  const tokenStart = value.indexOf(":", 33) + 1;
  const tokenEnd = tokenStart + Number(value.slice(33, tokenStart - 1));
  const hashStart = value.indexOf(":", tokenEnd) + 1;
  const hashEnd = hashStart + Number(value.slice(tokenEnd, hashStart - 1));
  if (!status || tokenStart === 0 || hashStart === 0 || !(hashEnd <= value.length))
    throw new Error(`Unreadable RedisStore record for ${JSON.stringify([scope.operation, scope.userId, scope.key])}.`);
  return {
    operation: scope.operation,
    userId: scope.userId,
    key: scope.key,
    requestHash: value.slice(hashStart, hashEnd),
    status,
    response: hashEnd < value.length ? value.slice(hashEnd + 1) : null,
    token: value.slice(tokenStart, tokenEnd),
    expiresAt: new Date(Number(value.slice(17, 33))),
    updatedAt: new Date(Number(value.slice(1, 17))),
  };
}

export function fromFields(
  scope: IdempotencyScope,
  [requestHash, status, response, token, expiresAt, updatedAt]: Fields,
): IdempotencyRecord {
  return {
    operation: scope.operation,
    userId: scope.userId,
    key: scope.key,
    requestHash: requestHash as string,
    status: status as IdempotencyRecord["status"],
    response,
    token: token as string,
    expiresAt: new Date(Number(expiresAt)),
    updatedAt: new Date(Number(updatedAt)),
  };
}

/** HGETALL's flat name, value, name, value... as the steps. */
export function fromPairs(pairs: string[]): StepResults {
  const steps: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const name = pairs[i];
    const result = pairs[i + 1];
    if (name !== undefined && result !== undefined) steps[name] = result;
  }
  return steps;
}

/**
 * A hash as HGETALL answers it: name, value, name, value... on RESP2 (ioredis, node-redis with
 * `RESP: 2`), a map on RESP3 (node-redis's default: an object, or a Map with that type mapping).
 */
export type HashReply = string[] | Record<string, string> | Map<string, string>;

export function hashOf(reply: HashReply): Record<string, string> {
  if (Array.isArray(reply)) return fromPairs(reply);
  return reply instanceof Map ? Object.fromEntries(reply) : reply;
}

/** ZRANGE… WITHSCORES: member, score, member, score... on RESP2, [member, score] pairs on RESP3. */
export type ScoredReply = Array<string | [string, string | number]>;

export function scoredMembers(reply: ScoredReply): Array<[string, number]> {
  const members: Array<[string, number]> = [];
  let member: string | undefined;
  for (const entry of reply) {
    if (Array.isArray(entry)) members.push([entry[0], Number(entry[1])]);
    else if (member === undefined) member = entry;
    else {
      members.push([member, Number(entry)]);
      member = undefined;
    }
  }
  return members;
}

/** The scope of a member of a bucket's PROCESSING index (`JSON.stringify([operation, userId, key])`). */
export function fromMember(member: string): IdempotencyScope {
  const [operation, userId, key] = JSON.parse(member) as [string, string, string];
  return { operation, userId, key };
}
