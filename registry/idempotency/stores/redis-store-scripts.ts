// The Lua scripts of RedisStore: each step that must be atomic runs as one script, in one hash slot.
//
// Keys of one scope (see redis-store.ts): its record (a string, layout below), its retry counter (a
// string), its steps (a hash: step name -> result JSON, and under the empty field the request hash
// they belong to) and the PROCESSING index of its bucket (a sorted set: member = the scope, score =
// last heartbeat). All four share a hash tag, so each script below runs on a cluster without CROSSSLOT errors.
// Every timestamp is the Redis server's clock in epoch milliseconds (`TIME`), so app servers with
// drifting clocks agree, and a record's `expiresAt` always equals the moment its key's TTL ends.
//
// The record is one string, so a create or a mark is one SET with its TTL (a hash took an HSET, a
// PEXPIRE and an HMGET of six fields):
//   status (1 char: P, S or F), updatedAt and expiresAt (16 digits each), then the token and the
//   request hash as the app encoded them, `<token.length>:<token><requestHash.length>:<requestHash>`,
//   then `=<response>` when there is one. A PROCESSING record ends with the request hash, and every
//   fenced script checks the status byte and compares the token at byte 34 with the
//   `<token.length>:<token>` it was given.
// What Redis spends on a script grows with the bytes of its arguments, so none is sent twice: the
// index member (the scope) is read from the record key's tail, and numbers go to Redis as the strings
// they arrived as.
// Records written before this layout are hashes. The scripts read both: a hash is never held by an
// execution of this version (it holds only records it created, all strings), so a fence answers 0
// there, while create answers its fields as a duplicate and recovery treats it as before. Older
// scripts meeting a string record fail with WRONGTYPE: a store error, never a second execution.

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** The scope as the index holds it, read from the record key (KEYS[1], `<tag>:r:<member>`) and the index key (KEYS[2], `<tag>:processing`). */
const MEMBER = "string.sub(KEYS[1], #KEYS[2] - 7)";

/**
 * A record: status, updatedAt and expiresAt (16 digits each, the 33 bytes every record starts with),
 * then `rest`, all in one concatenation, so Lua makes no intermediate string of the record: Redis's
 * Lua hashes every byte of every string it makes. Not string.format's `%s`, which cuts a string
 * shorter than 100 bytes at its first NUL byte.
 */
const RECORD = (status: string, updatedAt: string, expiresAt: string, ...rest: string[]) =>
  [status, `string.format('%016d%016d', ${updatedAt}, ${expiresAt})`, ...rest].join(" .. ");

/**
 * Only the execution holding the token (ARGV[1], `<length>:<token>`) may change a PROCESSING record:
 * the fence of every mark. `find` from byte 34 answers 34 only when the token starts there, and
 * copies nothing (a `string.sub` would make a string of it).
 */
const FENCE = `local held = redis.pcall('GET', KEYS[1])
if type(held) ~= 'string' or string.byte(held) ~= 80 or string.find(held, ARGV[1], 34, true) ~= 34 then return 0 end`;

/** What follows the holder's token in its record: `<requestHash.length>:<requestHash>`, a PROCESSING record's end. */
const SIZED_HASH = "string.sub(held, 34 + #ARGV[1])";

/** A record of the hash layout, in the order create answers it as a duplicate. */
const HASH_FIELDS = `'requestHash', 'status', 'response', 'token', 'expiresAt', 'updatedAt'`;

/**
 * KEYS: record, index, steps. ARGV: token, requestHash (both `<length>:<value>`), ttlMs.
 * Returns the record holding the key (a string, or a hash layout's fields), or when created 1, or
 * {1, name, result, ...} with the steps earlier attempts of this request recorded (one round trip either way).
 */
export const CREATE = `
local found = redis.pcall('GET', KEYS[1])
if found then
  if type(found) == 'table' then return redis.call('HMGET', KEYS[1], ${HASH_FIELDS}) end
  return found
end
${NOW}
redis.call('SET', KEYS[1], ${RECORD("'P'", "now", "now + tonumber(ARGV[3])", "ARGV[1]", "ARGV[2]")}, 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], now, ${MEMBER})
local stepsOf = redis.call('HGET', KEYS[3], '')
if not stepsOf or stepsOf ~= string.sub(ARGV[2], string.find(ARGV[2], ':', 1, true) + 1) then return 1 end
local created = {1}
local steps = redis.call('HGETALL', KEYS[3])
for i = 1, #steps, 2 do
  if steps[i] ~= '' then
    created[#created + 1] = steps[i]
    created[#created + 1] = steps[i + 1]
  end
end
return created`;

/**
 * KEYS: record, steps. ARGV: token, name, result, ttlMs. Records one step of the holder's request;
 * steps of another request hash are dropped first. Returns 1 when recorded, 0 when not the holder.
 */
export const MARK_STEP = `
${FENCE}
local tail = ${SIZED_HASH}
local hash = string.sub(tail, string.find(tail, ':', 1, true) + 1)
if redis.call('HGET', KEYS[2], '') ~= hash then redis.call('DEL', KEYS[2]) end
redis.call('HSET', KEYS[2], '', hash, ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1`;

/**
 * KEYS: record, index. ARGV: token, outcome ('S' | 'F'), ttlMs, response?.
 * A missing 4th argument stores no response (null). Returns 1 when marked, 0 when not the holder.
 */
export const MARK = `
${FENCE}
${NOW}
local expiresAt = now + tonumber(ARGV[3])
local record
if ARGV[4] then
  record = ${RECORD("ARGV[2]", "now", "expiresAt", "ARGV[1]", SIZED_HASH, "'='", "ARGV[4]")}
else
  record = ${RECORD("ARGV[2]", "now", "expiresAt", "ARGV[1]", SIZED_HASH)}
end
redis.call('SET', KEYS[1], record, 'PX', ARGV[3])
redis.call('ZREM', KEYS[2], ${MEMBER})
return 1`;

/** KEYS: record, index. ARGV: token. Deletes the holder's record so the next retry runs again. */
export const RELEASE = `
${FENCE}
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ${MEMBER})
return 1`;

/**
 * KEYS: record, index. ARGV: token, ttlMs. Renews the lease and keeps the record alive
 * at least `ttlMs` more (never shortens it).
 */
export const HEARTBEAT = `
${FENCE}
${NOW}
local expiresAt = math.max(tonumber(string.sub(held, 18, 33)), now + tonumber(ARGV[2]))
redis.call('SET', KEYS[1], ${RECORD("'P'", "now", "expiresAt", "ARGV[1]", SIZED_HASH)}, 'PXAT', expiresAt)
redis.call('ZADD', KEYS[2], now, ${MEMBER})
return 1`;

/** KEYS: counter. ARGV: ttlMs. The counter is its own key, so it outlives a released record. */
export const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return count`;

/**
 * KEYS: record, counter, index. ARGV: member, olderThanMs, maxRetries, ttlMs.
 * Takes one stuck record out of the index, counts it as a retry, and poisons or frees it; a record
 * of the hash layout stays a hash. Returns the new retry count, or nil when the record is no longer
 * stuck (another recovery took it, it completed, or its heartbeat came back). Index entries of
 * records that expired are dropped.
 */
export const RECOVER = `
${NOW}
if not redis.call('ZSCORE', KEYS[3], ARGV[1]) then return nil end
local held = redis.pcall('GET', KEYS[1])
local processing, updatedAt = false, 0
if type(held) == 'string' then
  processing = string.byte(held) == 80
  updatedAt = tonumber(string.sub(held, 2, 17))
elseif held then
  local fields = redis.call('HMGET', KEYS[1], 'status', 'updatedAt')
  processing = fields[1] == 'PROCESSING'
  updatedAt = tonumber(fields[2])
end
if not processing then
  redis.call('ZREM', KEYS[3], ARGV[1])
  return nil
end
if updatedAt >= now - tonumber(ARGV[2]) then return nil end
redis.call('ZREM', KEYS[3], ARGV[1])
local ttl = tonumber(ARGV[4])
local count = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ttl)
if count < tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1])
elseif type(held) == 'string' then
  redis.call('SET', KEYS[1], ${RECORD("'F'", "now", "now + ttl", "string.sub(held, 34)")}, 'PX', ttl)
else
  redis.call('HSET', KEYS[1], 'status', 'FAILED', 'updatedAt', now, 'expiresAt', now + ttl)
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return count`;
