// The Lua scripts of RedisStore: each step that must be atomic runs as one script, in one hash slot.
//
// Keys of one scope (see redis-store.ts): its record (a hash), its retry counter (a string), its steps
// (a hash: step name -> result JSON, and under the empty field the request hash they belong to) and the
// PROCESSING index of its bucket (a sorted set: member = the scope, score = last heartbeat). All four
// share a hash tag, so each script below runs on a cluster without CROSSSLOT errors.
// Every timestamp is the Redis server's clock in epoch milliseconds (`TIME`), so app servers with
// drifting clocks agree, and a record's `expiresAt` always equals the moment its key's TTL ends.

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** Only the execution holding `token` may change a PROCESSING record: the fence of every mark. */
const FENCE = `local held = redis.call('HMGET', KEYS[1], 'status', 'token')
if held[1] ~= 'PROCESSING' or held[2] ~= ARGV[1] then return 0 end`;

/**
 * KEYS: record, index, steps. ARGV: member, requestHash, token, ttlMs.
 * Returns the winning record's fields, or when created 1 followed by the name and result of each
 * step earlier attempts of this request recorded (one round trip either way).
 */
export const CREATE = `
local found = redis.call('HMGET', KEYS[1], 'requestHash', 'status', 'response', 'token', 'expiresAt', 'updatedAt')
if found[2] then return found end
${NOW}
local ttl = tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 'requestHash', ARGV[2], 'status', 'PROCESSING', 'token', ARGV[3], 'expiresAt', now + ttl, 'updatedAt', now)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], now, ARGV[1])
local created = {1}
if redis.call('HGET', KEYS[3], '') == ARGV[2] then
  local steps = redis.call('HGETALL', KEYS[3])
  for i = 1, #steps, 2 do
    if steps[i] ~= '' then
      created[#created + 1] = steps[i]
      created[#created + 1] = steps[i + 1]
    end
  end
end
return created`;

/**
 * KEYS: record, steps. ARGV: token, name, result, ttlMs. Records one step of the holder's request;
 * steps of another request hash are dropped first. Returns 1 when recorded, 0 when not the holder.
 */
export const MARK_STEP = `
${FENCE}
local hash = redis.call('HGET', KEYS[1], 'requestHash')
if redis.call('HGET', KEYS[2], '') ~= hash then redis.call('DEL', KEYS[2]) end
redis.call('HSET', KEYS[2], '', hash, ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1`;

/**
 * KEYS: record, index. ARGV: token, outcome ('SUCCESS' | 'FAILED'), ttlMs, member, response?.
 * A missing 5th argument stores no response (null). Returns 1 when marked, 0 when not the holder.
 */
export const MARK = `
${FENCE}
${NOW}
local ttl = tonumber(ARGV[3])
if ARGV[5] then
  redis.call('HSET', KEYS[1], 'status', ARGV[2], 'updatedAt', now, 'expiresAt', now + ttl, 'response', ARGV[5])
else
  redis.call('HSET', KEYS[1], 'status', ARGV[2], 'updatedAt', now, 'expiresAt', now + ttl)
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZREM', KEYS[2], ARGV[4])
return 1`;

/** KEYS: record, index. ARGV: token, member. Deletes the holder's record so the next retry runs again. */
export const RELEASE = `
${FENCE}
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1`;

/**
 * KEYS: record, index. ARGV: token, ttlMs, member. Renews the lease and keeps the record alive
 * at least `ttlMs` more (never shortens it).
 */
export const HEARTBEAT = `
${FENCE}
${NOW}
local expiresAt = math.max(tonumber(redis.call('HGET', KEYS[1], 'expiresAt')), now + tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'updatedAt', now, 'expiresAt', expiresAt)
redis.call('PEXPIREAT', KEYS[1], expiresAt)
redis.call('ZADD', KEYS[2], now, ARGV[3])
return 1`;

/** KEYS: counter. ARGV: ttlMs. The counter is its own key, so it outlives a released record. */
export const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return count`;

/**
 * KEYS: record, counter, index. ARGV: member, olderThanMs, maxRetries, ttlMs.
 * Takes one stuck record out of the index, counts it as a retry, and poisons or frees it.
 * Returns the new retry count, or nil when the record is no longer stuck (another recovery took it,
 * it completed, or its heartbeat came back). Index entries of records that expired are dropped.
 */
export const RECOVER = `
${NOW}
if not redis.call('ZSCORE', KEYS[3], ARGV[1]) then return nil end
local held = redis.call('HMGET', KEYS[1], 'status', 'updatedAt')
if held[1] ~= 'PROCESSING' then
  redis.call('ZREM', KEYS[3], ARGV[1])
  return nil
end
if tonumber(held[2]) >= now - tonumber(ARGV[2]) then return nil end
redis.call('ZREM', KEYS[3], ARGV[1])
local ttl = tonumber(ARGV[4])
local count = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ttl)
if count >= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'status', 'FAILED', 'updatedAt', now, 'expiresAt', now + ttl)
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  redis.call('DEL', KEYS[1])
end
return count`;
