// The one thing RedisStore asks of its Redis client: send a command, answer as Redis sent it. ioredis or node-redis.
/** An ioredis `Redis` or `Cluster`, as far as RedisStore uses it. */
export type IoRedisClient = {
  defineCommand(...args: never[]): unknown;
  call(command: string, ...args: Array<string | number>): Promise<unknown>;
};

/** A connected node-redis client (`await createClient({ url }).connect()`), as far as RedisStore uses it. */
export type NodeRedisClient = { sendCommand(args: string[]): Promise<unknown> };

/** A connected node-redis cluster (`await createCluster({ rootNodes }).connect()`): each command goes to its key's master. */
export type NodeRedisCluster = {
  readonly masters: readonly unknown[];
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
};

/** ioredis `Redis` or `Cluster` (the default), or node-redis's client or cluster (less CPU per command). */
export type RedisStoreClient = IoRedisClient | NodeRedisClient | NodeRedisCluster;

/** Sends one command; `key`, its first key (none for TIME), routes it on a node-redis cluster. */
export type SendCommand = (key: string | undefined, name: string, args: Array<string | number>) => Promise<unknown>;

/**
 * How to send a command on `client`. ioredis routes a command on a cluster by itself, from the
 * command's own keys; node-redis's cluster is told the key. Replies come back raw either way:
 * integers as numbers, strings, nil as null, arrays as arrays; HGETALL and WITHSCORES keep their
 * protocol's shape (see redis-records.ts). Command names go upper-case: ioredis would turn the
 * reply of a lower-case `hgetall` into an object.
 */
export function commandSender(client: RedisStoreClient): SendCommand {
  if (isIoRedis(client)) return (_key, name, args) => client.call(name, ...args);
  if ("masters" in client) return (key, name, args) => client.sendCommand(key, false, stringsOf(name, args));
  return (_key, name, args) => client.sendCommand(stringsOf(name, args));
}

/** The command as node-redis takes it: every argument a string. */
function stringsOf(name: string, args: Array<string | number>): string[] {
  const command = [name];
  for (const arg of args) command.push(String(arg));
  return command;
}

/** ioredis's clients define scripts as commands; node-redis's take them as options. */
function isIoRedis(client: RedisStoreClient): client is IoRedisClient {
  return typeof (client as Partial<IoRedisClient>).defineCommand === "function";
}
