// The real services the reliability suite needs, read from the environment, and the skip message when absent.

export const databaseUrl = process.env.DATABASE_URL;
export const redisUrl = process.env.REDIS_URL;

/** Why a scenario cannot run here, or undefined when every service it needs is configured. */
export function missingServices(needs: { redis?: boolean } = {}): string | undefined {
  const missing = [!databaseUrl && "DATABASE_URL", needs.redis && !redisUrl && "REDIS_URL"].filter(Boolean);
  if (missing.length === 0) return undefined;
  return `SKIPPED: the reliability suite runs against real services; set ${missing.join(" and ")} (e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379).`;
}

/** The database URL, asserted present (call only inside a suite that was not skipped). */
export function requireDatabaseUrl(): string {
  if (!databaseUrl) throw new Error(missingServices());
  return databaseUrl;
}

/** The Redis URL, asserted present (call only inside a suite that was not skipped). */
export function requireRedisUrl(): string {
  if (!redisUrl) throw new Error(missingServices({ redis: true }));
  return redisUrl;
}

/** The same server reached through another host:port, e.g. a fault-injecting proxy on loopback. */
export function viaAddress(url: string, port: number): string {
  const rewritten = new URL(url);
  rewritten.hostname = "127.0.0.1";
  rewritten.port = String(port);
  return rewritten.toString();
}

/** Host and port of a service URL, for pointing a proxy at it. */
export function addressOf(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname || "127.0.0.1", port: Number(parsed.port || defaultPort) };
}
